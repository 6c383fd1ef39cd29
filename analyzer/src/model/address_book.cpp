#include "model/address_book.h"

#include "model/footprint.h"

namespace streamhaz::analysis {
namespace {

template <class M>
const typename M::mapped_type* containing(const M& m, uint64_t addr) {
  auto it = m.upper_bound(addr);
  if (it == m.begin()) return nullptr;
  --it;
  const auto& v = it->second;
  return addr < range_end(v.base, v.bytes ? v.bytes : 1) ? &v : nullptr;
}

}  // namespace

void AddressBook::allocate(const trace::Alloc& a) {
  allocations_[a.ptr] = Allocation{a.ptr, a.bytes, a.kind, a.device, ++allocations_seen_};
}

std::optional<Allocation> AddressBook::release(uint64_t ptr) {
  auto it = allocations_.find(ptr);
  if (it == allocations_.end()) return std::nullopt;
  Allocation a = it->second;
  allocations_.erase(it);
  names_.erase(names_.lower_bound(a.base), names_.lower_bound(range_end(a.base, a.bytes)));
  return a;
}

void AddressBook::name(const trace::BufferName& n) { names_[n.ptr] = NamedRange{n.ptr, n.bytes, n.name}; }

const Allocation* AddressBook::allocation_at(uint64_t addr) const { return containing(allocations_, addr); }

const NamedRange* AddressBook::name_at(uint64_t addr) const { return containing(names_, addr); }

std::optional<bool> AddressBook::is_device(uint64_t addr) const {
  const Allocation* a = allocation_at(addr);
  if (!a) return std::nullopt;
  return a->kind != trace::AllocKind::HostPinned;
}

}  // namespace streamhaz::analysis
