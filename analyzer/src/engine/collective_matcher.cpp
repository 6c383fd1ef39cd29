#include "engine/collective_matcher.h"

#include <algorithm>

namespace streamhaz::analysis {
namespace {
using K = trace::NcclKind;
using R = trace::NcclReceives;
bool rooted(K k) {
  const R r = trace::nccl_facts(k).receives;
  return r == R::FromRoot || r == R::RootFromEveryone;
}
bool from_root_only(K k) { return trace::nccl_facts(k).receives == R::FromRoot; }
constexpr size_t kSparePending = 16;
}  // namespace

void CollectiveMatcher::Pending::reset(const trace::Nccl& n) {
  kind = n.kind;
  count = n.count;
  nranks = n.nranks;
  root = n.peer;
  posts.clear();
  starts.clear();
  knowns.clear();
  comm_ranks_seen.clear();
  waiters.clear();
  refused.clear();
  posted = waiting = 0;
  released = mismatch = resolved = false;
  joined.clear();
  root_start.clear();
  all.reset();
  root_frontier.reset();
  merged.clear();
}

bool CollectiveMatcher::Pending::note_comm_rank(uint32_t comm_rank) {
  // Ranks mostly post in order: the usual insert is at the end.
  if (comm_ranks_seen.empty() || comm_ranks_seen.back() < comm_rank) {
    comm_ranks_seen.push_back(comm_rank);
    return true;
  }
  const auto at = std::lower_bound(comm_ranks_seen.begin(), comm_ranks_seen.end(), comm_rank);
  if (at != comm_ranks_seen.end() && *at == comm_rank) return false;
  comm_ranks_seen.insert(at, comm_rank);
  return true;
}

CollectiveMatcher::Done& CollectiveMatcher::done_of(uint64_t comm) {
  if (!last_done_ || last_done_comm_ != comm) {
    last_done_ = &done_[comm];  // unordered_map elements stay put when it grows
    last_done_comm_ = comm;
  }
  return *last_done_;
}

bool CollectiveMatcher::completed_before(const CollectiveKey& k) {
  if (done_.empty()) return false;
  if (!(last_done_ && last_done_comm_ == k.first) && !done_.count(k.first)) return false;
  const Done& d = done_of(k.first);
  return k.second < d.below || d.above.count(k.second);
}

bool CollectiveMatcher::post(uint32_t index, const trace::Nccl& n, const VectorClock& start,
                             std::span<const Known> known) {
  std::lock_guard lock(mutex_);
  if (replicated_) {  // applied by every process at the end of the round (apply)
    PostRecord r{index, n, start, {}};
    for (const Known& k : known)
      if (const FrontierRef* f = k.get()) r.known.push_back((*f)->id());
    outbox_.push_back(std::move(r));
    return true;
  }
  return post_locked(index, n, start, known);
}

void CollectiveMatcher::post_ahead(uint32_t index, std::span<const AheadPost> posts) {
  std::lock_guard lock(mutex_);
  for (const AheadPost& a : posts) post_locked(index, a.call, a.start, a.known, false, a.promise);
}

std::vector<PostRecord> CollectiveMatcher::take_outbox() {
  std::lock_guard lock(mutex_);
  std::vector<PostRecord> out;
  out.swap(outbox_);
  return out;
}

void CollectiveMatcher::apply(const PostRecord& r, bool local) {
  std::lock_guard lock(mutex_);
  std::vector<Known> known;
  for (uint64_t id : r.known) {
    auto it = by_id_.find(id);
    if (it != by_id_.end()) known.emplace_back(it->second);
  }
  const bool must_wait = post_locked(r.index, r.call, r.start, known, local);
  (void)must_wait;
}

std::vector<uint64_t> CollectiveMatcher::unused_frontiers() const {
  std::lock_guard lock(mutex_);
  std::vector<uint64_t> ids;
  for (const auto& [id, f] : by_id_)
    if (f.use_count() == 1) ids.push_back(id);  // held by by_id_ alone
  std::sort(ids.begin(), ids.end());
  return ids;
}

void CollectiveMatcher::forget_frontiers(const std::vector<uint64_t>& ids) {
  std::lock_guard lock(mutex_);
  for (uint64_t id : ids) by_id_.erase(id);
}

FrontierRef CollectiveMatcher::build() {
  FrontierRef f = builder_.build();
  if (replicated_) by_id_.emplace(f->id(), f);
  return f;
}

// The pending entry of a call no rank has posted yet: a recycled map node when there is one.
CollectiveMatcher::PendingMap::iterator CollectiveMatcher::open(uint32_t index, const trace::Nccl& n) {
  const CollectiveKey key{n.comm, n.comm_seq};
  if (completed_before(key)) flag_irregular(Irregularity::What::PostedAfterCompleted, index, n);
  PendingMap::node_type node;
  if (!spare_.empty()) {
    node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = key;
  } else {
    PendingMap scratch;
    scratch.try_emplace(key);
    node = scratch.extract(scratch.begin());
  }
  Pending& p = node.mapped();
  p.reset(n);
  if (projected()) p.posts.reserve(std::min(n.nranks, ranks_));
  return pending_.insert(std::move(node)).position;
}

void CollectiveMatcher::flag_irregular(Irregularity::What what, uint32_t index, const trace::Nccl& n) {
  if (!irregular_) first_irregularity_ = Irregularity{what, index, n};
  irregular_ = true;
}

bool CollectiveMatcher::post_locked(uint32_t index, const trace::Nccl& n, const VectorClock& start,
                                    std::span<const Known> known, bool taken_here, const PromiseRef& ahead) {
  const CollectiveKey key{n.comm, n.comm_seq};
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    it = open(index, n);
  } else {
    Pending& p = it->second;
    const bool differs = p.kind != n.kind || p.count != n.count || p.nranks != n.nranks ||
                         (rooted(n.kind) && p.root != n.peer);
    if (differs && !p.mismatch) {
      // Ranks disagree on what call k was: no edge is safer than a wrong one. Once the
      // outcome is fixed (released), only the late caller is refused.
      if (p.resolved) p.refused.push_back(index);
      else p.mismatch = true;
      ++mismatched_;
    }
  }
  Pending& p = it->second;
  // Every rank had posted: whether or not this copy forgot the call yet, a repeat is the same
  // irregularity (replicated copies forget at different times).
  if (p.posted >= p.nranks) flag_irregular(Irregularity::What::PostedAfterCompleted, index, n);
  if (n.rank >= p.nranks) flag_irregular(Irregularity::What::RankOutsideCommunicator, index, n);
  else if (!p.note_comm_rank(n.rank)) flag_irregular(Irregularity::What::CommRankTwice, index, n);
  ++p.posted;
  if (p.posted > p.nranks) {
    flag_irregular(Irregularity::What::MorePostsThanRanks, index, n);
    if (!p.mismatch && !p.resolved) {
      p.mismatch = true;
      ++mismatched_;
    }
  }
  if (!p.resolved) {
    const bool is_root = rooted(p.kind) && p.root >= 0 && n.rank == static_cast<uint32_t>(p.root);
    if (!projected()) {
      p.joined.join(start);
      if (is_root) p.root_start.join(start);
    } else if (replicated_ || !from_root_only(p.kind) || is_root) {
      // Replicated: every receiver's post is kept, to make its knowledge frontier here too.
      const bool sender = !from_root_only(p.kind) || is_root;
      Post post{index, n.rank, static_cast<uint32_t>(p.starts.size()), 0, static_cast<uint32_t>(p.knowns.size()),
                static_cast<uint32_t>(known.size()), sender};
      if (sender) {
        p.starts.insert(p.starts.end(), start.data(), start.data() + start.size());
        post.start_size = static_cast<uint32_t>(start.size());
      }
      p.knowns.insert(p.knowns.end(), known.begin(), known.end());
      p.posts.push_back(post);
    }
  }
  if (ahead) {
    // The rank took the call already. Where its post was not kept (the ranks disagree on the
    // call: no edge), or the outcome was fixed before it (released), the promise is kept now.
    ran_ahead_once_ = true;
    const bool stored = !p.resolved && !p.posts.empty() && p.posts.back().index == index &&
                        p.posts.back().comm_rank == n.rank;
    if (stored) {
      p.posts.back().ahead = ahead;
    } else {
      keep_promise(p, index, n.rank, {start.data(), start.size()}, known, *ahead);
      if (p.resolved) {
        forget_if_done(it);  // no take() follows to forget it
        return false;
      }
    }
  } else if (taken_here) {
    ++p.waiting;
  }
  if (p.resolved) return false;  // released before this post: its outcome is fixed already
  if (p.released || p.posted >= p.nranks) {
    if (!resolve(p, false)) {
      defer(key);
    } else {
      forget_if_done(it);
      retry_deferred();  // calls that named this one's promises
      return false;
    }
  }
  if (ahead) return false;
  p.waiters.push_back(index);
  return true;
}

void CollectiveMatcher::defer(const CollectiveKey& key) {
  if (std::find(deferred_.begin(), deferred_.end(), key) == deferred_.end()) deferred_.push_back(key);
}

void CollectiveMatcher::retry_deferred() {
  for (bool progress = !deferred_.empty(); progress;) {
    progress = false;
    for (size_t i = 0; i < deferred_.size(); ++i) {
      auto it = pending_.find(deferred_[i]);
      if (it != pending_.end() && !it->second.resolved && !resolve(it->second, false)) continue;
      deferred_.erase(deferred_.begin() + static_cast<std::ptrdiff_t>(i));
      if (it != pending_.end()) forget_if_done(it);
      progress = true;  // its promises are kept: look again from the start
      break;
    }
  }
}

// The outcome is fixed: merge the posts into the frontiers receivers read (projected), and
// keep the promises of the ranks that ran ahead. Not while a post names an unkept promise
// (false), unless `force`d: then without what those promises would have given.
bool CollectiveMatcher::resolve(Pending& p, bool force) {
  for (const Known& k : p.knowns) {
    if (!k.pending()) continue;
    if (!force) return false;
    // Calls waiting for each other's promises: ranks ran ahead into calls that would deadlock
    // on a GPU. Waiting ranks would have given both up; this pass cannot say the same.
    speculation_failed_ = true;
    break;
  }
  p.resolved = true;
  woken_.insert(woken_.end(), p.waiters.begin(), p.waiters.end());
  if (!woken_.empty()) any_woken_.store(true, std::memory_order_release);
  p.waiters.clear();
  if (!projected() || p.mismatch) {
    keep_promises(p);
    p.posts.clear();
    p.knowns.clear();
    return true;
  }
  // Every sender usually knows the same few frontiers: merge each once.
  inputs_.clear();  // a handful: a linear search beats a hash set
  for (const Post& post : p.posts)
    if (post.sender)
      for (const Known& k : p.known_of(post))
        if (const FrontierRef* f = k.get();
            f && std::none_of(inputs_.begin(), inputs_.end(), [&](const FrontierRef& g) { return g == *f; }))
          inputs_.push_back(*f);
  builder_.start(0);
  if (inputs_.size() > 1 && inputs_.size() <= 64) {
    // Those another one holds are not merged again, but still noted as inputs: every sender's
    // knowledge is then covered by the result, and knowledge_for returns it as it is.
    for (const FrontierRef& f : inputs_) builder_.note_input(f->id());
    drop_covered(inputs_);
  }
  for (const Post& post : p.posts)
    if (post.sender) builder_.add(post.index, p.starts.data() + post.start_at, post.start_size);
  for (const FrontierRef& f : inputs_) builder_.add(f);
  inputs_.clear();
  FrontierRef merged = build();
  if (from_root_only(p.kind)) p.root_frontier = std::move(merged);
  else p.all = std::move(merged);
  // Replicated: make every receiver's knowledge frontier now, in post order, so that every
  // process builds the same frontiers in the same order (ids agree).
  if (replicated_)
    for (const Post& post : p.posts)
      if (const FrontierRef* got = frontier_for(p, post.comm_rank); got && *got)
        knowledge_for(p, *got, p.known_of(post));
  keep_promises(p);
  p.posts.clear();
  p.knowns.clear();  // releases the frontiers the posts knew
  return true;
}

// A rank that ran ahead took the call as giving its stream nothing: right iff the call's
// frontier holds nothing of that rank beyond its own start (checked in keep_promise). Its
// promise gets what take() would have returned.
void CollectiveMatcher::keep_promises(Pending& p) {
  for (Post& post : p.posts) {
    if (!post.ahead) continue;
    keep_promise(p, post.index, post.comm_rank, {p.starts.data() + post.start_at, post.start_size},
                 p.known_of(post), *post.ahead);
    post.ahead.reset();
  }
}

void CollectiveMatcher::keep_promise(Pending& p, uint32_t index, uint32_t comm_rank, std::span<const ClockValue> start,
                                     std::span<const Known> known, FrontierPromise& promise) {
  const FrontierRef* got = projected() && !p.mismatch && !p.refuses(index) ? frontier_for(p, comm_rank) : nullptr;
  if (!got || !*got) {
    // The call gives the rank nothing (take() would return null and note no receipt), but the
    // rank noted one: it must pass on what its start knew, which the noted receipt now hides
    // from the receipts before it on the stream.
    promise.keep(merged(known));
    return;
  }
  const auto [values, n] = (*got)->of(index);
  for (size_t i = 0; i < n; ++i)
    if (values[i] > (i < start.size() ? start[i] : 0)) speculation_failed_ = true;
  promise.keep(knowledge_for(p, *got, known));
}

FrontierRef CollectiveMatcher::merged(std::span<const Known> known) {
  const FrontierRef* one = nullptr;
  size_t count = 0;
  for (const Known& k : known)
    if (const FrontierRef* f = k.get()) one = f, ++count;
  if (count <= 1) return one ? *one : nullptr;
  builder_.start(0);
  for (const Known& k : known)
    if (const FrontierRef* f = k.get()) builder_.add(*f);
  return build();
}

// The frontier the call of `comm_rank` receives, or null (it receives nothing).
const FrontierRef* CollectiveMatcher::frontier_for(Pending& p, uint32_t comm_rank) {
  const bool is_root = p.root >= 0 && comm_rank == static_cast<uint32_t>(p.root);
  switch (trace::nccl_facts(p.kind).receives) {
    case R::FromRoot: return &p.root_frontier;               // receives from the root
    case R::RootFromEveryone: return is_root ? &p.all : nullptr;  // only the root receives
    case R::FromEveryone: return &p.all;                     // every rank receives from all
    case R::FromPeer:
    case R::Nothing: return nullptr;  // point to point: never posted here
  }
  return nullptr;
}

bool CollectiveMatcher::ready(const CollectiveKey& k) const {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(k);
  return it == pending_.end() || it->second.resolved;
}

bool CollectiveMatcher::speculation_failed() const {
  std::lock_guard lock(mutex_);
  // Irregular input's outcome may depend on the order of posts, which running ahead changes.
  return speculation_failed_ || (irregular_ && ran_ahead_once_);
}

// What a receiver's later collectives pass on: the frontier it got, plus what it knew at its
// own start when the frontier does not already hold that (a broadcast's receivers).
FrontierRef CollectiveMatcher::knowledge_for(Pending& p, const FrontierRef& got, std::span<const Known> known) {
  auto uncovered = [&](const Known& k) {
    const FrontierRef* f = k.get();  // an unkept promise here: a forced resolve goes without it
    return f && !got->covers((*f)->id()) ? f : nullptr;
  };
  if (std::none_of(known.begin(), known.end(), uncovered)) return got;
  std::vector<uint64_t> ids;
  for (const Known& k : known)
    if (const FrontierRef* f = uncovered(k)) ids.push_back((*f)->id());
  std::sort(ids.begin(), ids.end());
  for (const auto& [key, f] : p.merged)
    if (key == ids) return f;
  builder_.start(0);
  builder_.add(got);
  for (const Known& k : known)
    if (const FrontierRef* f = uncovered(k)) builder_.add(*f);
  FrontierRef f = build();
  p.merged.emplace_back(std::move(ids), f);
  return f;
}

FrontierRef CollectiveMatcher::take(const CollectiveKey& k, uint32_t index, uint32_t comm_rank,
                                    std::span<const Known> known, VectorClock& clock) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(k);
  if (it == pending_.end()) return {};
  Pending& p = it->second;
  if (!p.resolved) resolve(p, true);  // taken before it resolved: only by a caller's mistake
  FrontierRef knowledge;
  if (!p.mismatch && !p.refuses(index)) {
    const bool is_root = p.root >= 0 && comm_rank == static_cast<uint32_t>(p.root);
    if (!projected()) {
      switch (trace::nccl_facts(p.kind).receives) {
        case R::FromRoot: clock.join(p.root_start); break;
        case R::RootFromEveryone:
          if (is_root) clock.join(p.joined);
          break;
        case R::FromEveryone: clock.join(p.joined); break;
        case R::FromPeer:
        case R::Nothing: break;  // point to point: never posted here
      }
    } else if (const FrontierRef* frontier = frontier_for(p, comm_rank); frontier && *frontier) {
      const auto [values, n] = (*frontier)->of(index);
      clock.join(values, n);
      knowledge = knowledge_for(p, *frontier, known);
    }
  }
  if (p.waiting) --p.waiting;
  forget_if_done(it);
  return knowledge;
}

void CollectiveMatcher::release_all() {
  std::lock_guard lock(mutex_);
  for (auto& [key, p] : pending_) {
    if (p.resolved || p.released || p.posted >= p.nranks) continue;
    p.released = true;
    ++partial_;
    defer(key);
    // Ranks that wait would have stopped at other calls, so the calls given up and the posts
    // they hold could differ: this pass cannot vouch for its outcome.
    if (ran_ahead_once_) speculation_failed_ = true;
  }
  retry_deferred();  // those whose promises can be kept, in the order they free each other
  while (!deferred_.empty()) {
    // What is left names promises of calls that wait for it: force the first by key (the
    // same whatever order the threads deferred them in), then whatever that frees.
    auto first = std::min_element(deferred_.begin(), deferred_.end());
    const CollectiveKey key = *first;
    deferred_.erase(first);
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second.resolved) continue;
    if (!it->second.released) ++partial_;
    resolve(it->second, true);
    forget_if_done(it);
    retry_deferred();
  }
}

void CollectiveMatcher::take_woken(std::vector<uint32_t>& out) {
  out.clear();
  // Most steps wake no one: skip the lock the other threads contend for. No wake is lost: the
  // thread whose post or release_all woke ranks sets the flag and calls this afterwards.
  if (!any_woken_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  out.swap(woken_);
  any_woken_.store(false, std::memory_order_relaxed);
}

void CollectiveMatcher::forget_if_done(PendingMap::iterator it) {
  if (it->second.waiting != 0 || it->second.posted < it->second.nranks) return;
  const CollectiveKey key = it->first;
  if (spare_.size() < kSparePending) {
    PendingMap::node_type node = pending_.extract(it);
    node.mapped().reset(trace::Nccl{});  // drops its frontiers now, keeps its capacity
    spare_.push_back(std::move(node));
  } else {
    pending_.erase(it);
  }
  Done& d = done_of(key.first);
  if (d.fresh) {  // the communicator's first completed call: where its numbering starts
    d.fresh = false;
    d.below = key.second;
  }
  if (key.second < d.below) return;
  if (key.second == d.below) ++d.below;  // in order: the usual case, no set node
  else d.above.insert(key.second);
  while (!d.above.empty() && *d.above.begin() == d.below) {
    d.above.erase(d.above.begin());
    ++d.below;
  }
}

}  // namespace streamhaz::analysis
