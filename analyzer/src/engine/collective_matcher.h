// Cross-rank edges of NCCL collectives. A call ends only after every rank whose data it
// receives has started its call: for all-reduce, all-gather, reduce-scatter and all-to-all
// that is every rank; for a broadcast or scatter, the root (the root itself receives
// nothing); for a reduce or gather, the root receives from every rank and the others from
// none. Each rank posts the clock at which its call started (matched by communicator hash
// and sequence number); once all `nranks` have posted, every rank's stream joins, after its
// own call, what the ranks it received from had started after.
//
// Two representations of "what they had started after" (docs/analysis.md, "Cross-rank order"):
//   - projected (the default): a rank posts its own clock (its timelines only) and the
//     frontiers that clock knows; the matcher merges them into one frontier per collective and
//     a receiver joins only its own entry, O(its timelines + log ranks);
//   - dense (the reference): clocks span every timeline of every rank and are joined whole.
// A rank may also run ahead of a call every rank receives from every rank (all-reduce,
// all-gather, reduce-scatter, all-to-all): it takes the call at once, as if the call gave its
// stream nothing it did not know, with a promise of the frontier its later collectives pass
// on, and hands its post over later (post_ahead). When the call resolves the matcher keeps the
// promise and checks the guess; a wrong guess (the call did bring order the stream lacked)
// makes the pass's findings unusable, and the caller runs the pass again without running
// ahead (speculation_failed).
// The matcher is thread-safe: ranks may run on several threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "clock/frontier.h"
#include "clock/knowledge.h"
#include "clock/vector_clock.h"
#include "streamhaz/trace/records.h"

namespace streamhaz::analysis {

using CollectiveKey = std::pair<uint64_t, uint64_t>;  // communicator hash, sequence number

inline bool is_collective(const trace::Nccl& n) {
  switch (trace::nccl_facts(n.kind).receives) {
    case trace::NcclReceives::FromEveryone:
    case trace::NcclReceives::FromRoot:
    case trace::NcclReceives::RootFromEveryone: return n.nranks > 1;
    case trace::NcclReceives::FromPeer:
    case trace::NcclReceives::Nothing: return false;  // point to point: no edge is added
  }
  return false;
}
// A collective in which every rank receives from every rank: the only kind a rank may run ahead of.
inline bool everyone_receives(trace::NcclKind k) {
  return trace::nccl_facts(k).receives == trace::NcclReceives::FromEveryone;
}

// The first post that made the input irregular (CollectiveMatcher::irregular): what was wrong
// and where, for a message that points at the trace.
struct Irregularity {
  enum class What { RankOutsideCommunicator, CommRankTwice, MorePostsThanRanks, PostedAfterCompleted };
  What what = What::MorePostsThanRanks;
  uint32_t index = 0;  // the posting rank's place in the analysis (its trace file)
  trace::Nccl call;    // the post: communicator, sequence number, communicator rank, operation seq
};

// One rank's post as it travels between processes (replicated matchers, analyze_shard).
struct PostRecord {
  uint32_t index = 0;
  trace::Nccl call;  // kind, count, nranks, rank, peer, comm, comm_seq
  VectorClock start;
  std::vector<uint64_t> known;  // frontier ids (replicated matchers hold no promises)
};

// The post of a call a rank ran ahead of: what post() takes, and the promise the rank holds.
struct AheadPost {
  trace::Nccl call;
  VectorClock start;
  std::vector<Known> known;
  PromiseRef promise;
};

class CollectiveMatcher {
 public:
  enum class Clocks { Projected, Dense };
  // `replicated`: one copy of the matcher per process (projected clocks only). Posts are held
  // in an outbox instead of applied; every process applies every process's posts in one order
  // (apply), so all copies build the same frontiers with the same ids.
  explicit CollectiveMatcher(Clocks clocks = Clocks::Projected, bool replicated = false)
      : clocks_(clocks), replicated_(replicated) {}
  bool projected() const { return clocks_ == Clocks::Projected; }
  // The ranks of the analysis (its traces): at most that many posts of a regular call are
  // held, so space is reserved for no more, whatever nranks a trace claims.
  void set_ranks(uint32_t ranks) { ranks_ = ranks; }
  // How many calls in a row a rank may run ahead of (RankEngine): 0 (the default) for none.
  // Projected, not replicated clocks only.
  void set_run_ahead(uint32_t calls) { run_ahead_ = projected() && !replicated_ ? calls : 0; }
  uint32_t run_ahead() const { return run_ahead_; }

  // Posts the start of rank `index`'s call (`index`: the rank's place in the analysis):
  // its stream clock before the call and, projected, the frontiers that clock knows. True
  // when that rank must wait for the others.
  bool post(uint32_t index, const trace::Nccl& n, const VectorClock& start, std::span<const Known> known);
  // Posts calls rank `index` ran ahead of (run_ahead() > 0), in its order, under one lock: a
  // rank buffers them while it runs and hands them over before its next other post or its
  // end. Only calls every rank receives from every rank (the caller checks their kind).
  void post_ahead(uint32_t index, std::span<const AheadPost> posts);
  // Resolved: its outcome is fixed (every rank posted, or released) and so is every promise
  // its posts named.
  bool ready(const CollectiveKey& k) const;
  // Joins what the call of communicator rank `comm_rank` receives into `clock` (its stream's
  // clock; nothing when the ranks disagree about the call) and returns, projected, the
  // frontier its later collectives pass on (null: nothing received). `known` is what the
  // rank posted.
  FrontierRef take(const CollectiveKey& k, uint32_t index, uint32_t comm_rank, std::span<const Known> known,
                   VectorClock& clock);
  // No rank can move: ends every wait with the starts posted so far (fewer edges). What a
  // released collective gives is fixed then: ranks that post to it later add nothing to it.
  // Releasing anything in a pass where a rank ran ahead counts as a wrong guess: ranks that
  // wait would have stopped at other calls, so the calls given up could differ.
  // A call every rank posted but whose posts name promises that can never be kept (ranks that
  // ran ahead into a cycle of calls, which would deadlock on a GPU) resolves without them, and
  // the pass counts as a wrong guess (waiting ranks would have given every call of the cycle up).
  // Also ends a pass: calls that only ranks running ahead posted are resolved and checked.
  void release_all();
  // A rank ran ahead of a call that brought its stream order it lacked: the pass's findings
  // may be wrong; run it again without running ahead.
  bool speculation_failed() const;
  // Ranks whose wait ended since the last call (posted-to-completion or released), swapped
  // into `out` (cleared first; both keep their capacity).
  void take_woken(std::vector<uint32_t>& out);
  std::vector<uint32_t> take_woken() {
    std::vector<uint32_t> out;
    take_woken(out);
    return out;
  }

  // Replicated matchers: this process's posts since the last call, and applying any process's.
  std::vector<PostRecord> take_outbox();
  // `local`: posted by a rank of this process, which will take the call's result here (a call
  // is forgotten once every post that will be taken here was).
  void apply(const PostRecord& post, bool local = true);
  // Replicated matchers keep every frontier by id for the posts of other processes. A frontier
  // no rank of this process holds any more (sorted ids) can never be named by a post from
  // here again; once every process reports it so, in the same round, every copy forgets it
  // (forget_frontiers with the ids all processes reported), which keeps the copies equal.
  std::vector<uint64_t> unused_frontiers() const;
  void forget_frontiers(const std::vector<uint64_t>& ids);
  size_t frontiers_kept() const { return by_id_.size(); }

  uint64_t partial() const { return partial_; }        // collectives not every rank reached
  uint64_t mismatched() const { return mismatched_; }  // same key, different call
  // More posts to a key than its ranks, a communicator rank posted twice, or a key posted
  // again after it completed: the outcome may depend on the order ranks were run in.
  bool irregular() const { return irregular_; }
  const Irregularity& first_irregularity() const { return first_irregularity_; }

 private:
  // A post's start clock and known frontiers live in its Pending's flat arrays, so that a
  // recycled Pending keeps their capacity (no allocation per post).
  struct Post {
    uint32_t index;
    uint32_t comm_rank;
    uint32_t start_at, start_size;  // in Pending::starts
    uint32_t known_at, known_size;  // in Pending::knowns
    bool sender;  // its start reaches the receivers (a broadcast's root; every rank otherwise)
    PromiseRef ahead;  // the rank ran ahead: kept (and its guess checked) when the call resolves
  };
  struct Pending {
    trace::NcclKind kind;
    uint64_t count;
    uint32_t nranks;
    int32_t root;
    std::vector<Post> posts;  // until resolved
    std::vector<ClockValue> starts;
    std::vector<Known> knowns;
    // The communicator ranks that posted, sorted: it grows with the posts, never with the
    // trace-given nranks (a hostile 2^32 - 1 made one bit vector of 512 MiB per call).
    std::vector<uint32_t> comm_ranks_seen;
    std::vector<uint32_t> waiters;
    std::vector<uint32_t> refused;  // posted a different call after the outcome was fixed
    uint32_t posted = 0;
    uint32_t waiting = 0;  // posted (by a rank that takes here) and not yet taken
    bool released = false;
    bool mismatch = false;
    bool resolved = false;  // the results below are final
    VectorClock joined, root_start;        // dense
    FrontierRef all, root_frontier;        // projected
    std::vector<std::pair<std::vector<uint64_t>, FrontierRef>> merged;  // receiver knowledge ids -> frontier

    // For a new call: every field as fresh, the vectors' capacity kept.
    void reset(const trace::Nccl& n);
    bool refuses(uint32_t index) const { return std::find(refused.begin(), refused.end(), index) != refused.end(); }
    // Notes that `comm_rank` posted; false if it had posted before.
    bool note_comm_rank(uint32_t comm_rank);
    std::span<const Known> known_of(const Post& post) const {
      return {knowns.data() + post.known_at, post.known_size};
    }
  };
  using PendingMap = std::map<CollectiveKey, Pending>;
  // Per communicator, sequence numbers already completed and forgotten: every one below
  // `below`, and those in `above` (a repeated key is irregular input).
  struct Done {
    uint64_t below = 0;
    std::set<uint64_t> above;
    bool fresh = true;  // nothing completed yet
  };
  bool post_locked(uint32_t index, const trace::Nccl& n, const VectorClock& start, std::span<const Known> known,
                   bool taken_here = true, const PromiseRef& ahead = nullptr);
  PendingMap::iterator open(uint32_t index, const trace::Nccl& n);
  void flag_irregular(Irregularity::What what, uint32_t index, const trace::Nccl& n);
  // resolve: a call whose outcome is fixed, unless one of its posts names an unkept promise
  // (false: it waits in deferred_ for those); `force`: without what they would have given.
  // retry_deferred resolves the deferred calls that kept promises freed, in turn.
  bool resolve(Pending& p, bool force);
  void defer(const CollectiveKey& key);
  void retry_deferred();
  void keep_promises(Pending& p);
  void keep_promise(Pending& p, uint32_t index, uint32_t comm_rank, std::span<const ClockValue> start,
                    std::span<const Known> known, FrontierPromise& promise);
  FrontierRef merged(std::span<const Known> known);  // one frontier of them all (null: none)
  const FrontierRef* frontier_for(Pending& p, uint32_t comm_rank);
  FrontierRef build();
  FrontierRef knowledge_for(Pending& p, const FrontierRef& got, std::span<const Known> known);
  void forget_if_done(PendingMap::iterator it);
  bool completed_before(const CollectiveKey& k);
  Done& done_of(uint64_t comm);

  Clocks clocks_;
  bool replicated_;
  uint32_t run_ahead_ = 0;
  uint32_t ranks_ = 0;
  std::vector<PostRecord> outbox_;
  std::unordered_map<uint64_t, FrontierRef> by_id_;  // replicated: every frontier built (kept)
  mutable std::mutex mutex_;
  PendingMap pending_;
  // Completed collectives' map nodes, reused by the next ones (a handful: collectives in flight).
  std::vector<PendingMap::node_type> spare_;
  std::unordered_map<uint64_t, Done> done_;
  uint64_t last_done_comm_ = 0;  // most jobs use one or two communicators: skip the hash
  Done* last_done_ = nullptr;
  std::vector<uint32_t> woken_;
  std::atomic<bool> any_woken_{false};  // woken_ is not empty (read without the lock)
  std::vector<CollectiveKey> deferred_;  // fixed outcome, waiting for promises (a handful)
  std::vector<FrontierRef> inputs_;  // resolve's scratch
  FrontierBuilder builder_;
  uint64_t partial_ = 0;
  uint64_t mismatched_ = 0;
  bool irregular_ = false;
  bool speculation_failed_ = false;
  bool ran_ahead_once_ = false;  // some rank ran ahead of a call in this pass
  Irregularity first_irregularity_;
};

}  // namespace streamhaz::analysis
