#include "collectors/import/kineto/op_work_links.hpp"

#include <algorithm>
#include <map>
#include <span>

#include "profiler/work_records.hpp"

namespace meshscope::kineto {
namespace {

// Operators that move or lay out memory: a matmul of a transposed input runs one (aten::contiguous ->
// aten::clone -> aten::copy_) before its GEMM, and its copy kernel is memory traffic, not the GEMM's time.
bool is_copy_operator(std::string_view name) {
  return name == "aten::copy_" || name == "aten::contiguous" || name == "aten::clone" ||
         name == "aten::_to_copy" || name == "aten::to";
}

StringId intern_list(RecordSink& writer, std::string_view list) {
  return is_canonical_list(list) ? writer.intern(list) : writer.intern(canonical_list(list));
}

}  // namespace

std::uint32_t OpWorkLinker::thread_of(std::int32_t rank, std::int64_t pid, std::int64_t tid) {
  // Consecutive events mostly come from one thread: check the last one before hashing.
  if (any_thread_) {
    const Thread& t = threads_[last_thread_];
    if (t.tid == tid && t.pid == pid && t.rank == rank) return last_thread_;
  }
  auto& list = threads_by_tid_[tid];
  for (std::uint32_t i : list) {
    if (threads_[i].pid == pid && threads_[i].rank == rank) return last_thread_ = i;
  }
  const auto index = static_cast<std::uint32_t>(threads_.size());
  threads_.push_back({rank, pid, tid});
  list.push_back(index);
  any_thread_ = true;
  return last_thread_ = index;
}

void OpWorkLinker::add_op(RecordSink& writer, std::int32_t rank, std::int64_t pid, std::int64_t tid,
                          TimeNs start, TimeNs end, std::string_view name, std::int64_t external_id,
                          bool shapes, std::string_view dims, std::string_view types,
                          std::string_view concrete) {
  const std::uint32_t thread = thread_of(rank, pid, tid);
  threads_[thread].ops = true;
  std::int32_t work_index = -1;
  if (shapes) {
    threads_[thread].shapes = true;
    if (!dims.empty() && has_formula(name)) {
      const ShapeKeyView key{name, dims, types, concrete};
      auto it = work_of_shapes_.find(key);
      if (it == work_of_shapes_.end()) {
        it = work_of_shapes_
                 .emplace(ShapeKey{std::string(name), std::string(dims), std::string(types),
                                   std::string(concrete)},
                          compute_work(writer, name, dims, types, concrete))
                 .first;
      }
      work_index = static_cast<std::int32_t>(works_.size());
      works_.push_back(it->second);
    }
  }
  added_ops_.push_back({start, end, external_id, thread, work_index, is_copy_operator(name)});
}

std::size_t OpWorkLinker::ShapeHash::operator()(const ShapeKeyView& k) const {
  const std::hash<std::string_view> h;
  std::size_t seed = h(k.name);
  for (std::string_view part : {k.dims, k.types, k.concrete}) seed = seed * 1000003u ^ h(part);
  return seed;
}

OpWorkLinker::Work OpWorkLinker::compute_work(RecordSink& writer, std::string_view name,
                                              std::string_view dims, std::string_view types,
                                              std::string_view concrete) {
  Work work{writer.intern(name), intern_list(writer, dims), intern_list(writer, types), 0, 0, 0, 0};
  std::int64_t category = 0;
  const OpWorkStatus s = formulas_.work(name, dims, types, concrete, category, work.flops, work.bytes);
  work.status = static_cast<std::int8_t>(s);
  if (s == OpWorkStatus::kCounted) {
    work.category = static_cast<std::int8_t>(category);
  } else {
    work.flops = work.bytes = 0;
  }
  return work;
}

void OpWorkLinker::add_call(std::int32_t rank, std::int64_t pid, std::int64_t tid, TimeNs start,
                            std::int64_t correlation, std::int64_t external_id) {
  if (correlation == kNull) return;
  added_calls_.push_back({start, correlation, external_id, thread_of(rank, pid, tid)});
}

void OpWorkLinker::add_activity(std::int32_t rank, std::int64_t activity_id, TimeNs start, TimeNs end,
                                std::int64_t correlation, std::int64_t external_id, bool copy) {
  added_activities_.push_back({activity_id, start, end, correlation, external_id, rank, copy});
}

namespace {

// (rank, id) -> operator index, the first added winning where an id repeats. Kineto numbers External ids and
// correlation ids consecutively, so each rank's ids usually fit a dense array (no sort, one load per
// look-up); sparse ids fall back to a sorted vector.
class IdTable {
 public:
  void add(std::int32_t rank, std::int64_t id, std::uint32_t op) { keys_.push_back({rank, id, op}); }

  void build() {
    std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> bounds;  // rank -> (min, max) id
    std::map<std::int32_t, std::size_t> counts;
    for (const Key& k : keys_) {
      auto [it, added] = bounds.try_emplace(k.rank, k.id, k.id);
      if (!added) it->second = {std::min(it->second.first, k.id), std::max(it->second.second, k.id)};
      ++counts[k.rank];
    }
    dense_ = true;
    for (const auto& [rank, range] : bounds) {
      const auto span = static_cast<std::uint64_t>(range.second) - static_cast<std::uint64_t>(range.first);
      if (span > 4 * static_cast<std::uint64_t>(counts[rank]) + 4096) dense_ = false;
    }
    if (dense_) {
      for (const auto& [rank, range] : bounds) {
        ranks_.push_back(
            {rank, range.first,
             std::vector<std::int32_t>(static_cast<std::size_t>(range.second - range.first) + 1, -1)});
      }
      for (const Key& k : keys_) {
        DenseRank& r = ranks_[rank_slot(k.rank)];
        std::int32_t& slot = r.ops[static_cast<std::size_t>(k.id - r.base)];
        if (slot < 0) slot = static_cast<std::int32_t>(k.op);
      }
      keys_ = {};
    } else {
      std::stable_sort(keys_.begin(), keys_.end());
    }
  }

  std::int32_t find(std::int32_t rank, std::int64_t id) const {
    if (dense_) {
      const std::size_t slot = rank_slot(rank);
      if (slot == ranks_.size()) return -1;
      const DenseRank& r = ranks_[slot];
      if (id < r.base || id - r.base >= static_cast<std::int64_t>(r.ops.size())) return -1;
      return r.ops[static_cast<std::size_t>(id - r.base)];
    }
    auto it = std::lower_bound(keys_.begin(), keys_.end(), Key{rank, id, 0});
    return it != keys_.end() && it->rank == rank && it->id == id ? static_cast<std::int32_t>(it->op) : -1;
  }

 private:
  struct Key {
    std::int32_t rank;
    std::int64_t id;
    std::uint32_t op;
    bool operator<(const Key& o) const { return rank != o.rank ? rank < o.rank : id < o.id; }
  };
  struct DenseRank {
    std::int32_t rank;
    std::int64_t base;
    std::vector<std::int32_t> ops;
  };
  // The index of RANK's dense array (a file holds one rank, rarely a few), ranks_.size() when none.
  std::size_t rank_slot(std::int32_t rank) const {
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (ranks_[i].rank == rank) return i;
    }
    return ranks_.size();
  }

  std::vector<Key> keys_;
  std::vector<DenseRank> ranks_;
  bool dense_ = true;
};

// Indices 0..COUNT-1 grouped by THREAD(i) (a counting sort: index order kept) and ordered by BEFORE within
// each group, stably; group t is order[first[t] .. first[t + 1]). Within a thread the items arrive in a few
// ascending runs (a file often holds the thread's events in order, sometimes in two or three sections):
// the runs are merged, which costs one pass per doubling of a run; std::stable_sort takes over when the
// order is mostly lost.
template <typename ThreadOf, typename Before>
void group_by_thread(std::size_t count, std::size_t thread_count, ThreadOf thread, Before before,
                     std::vector<std::uint32_t>& first, std::vector<std::uint32_t>& order) {
  first.assign(thread_count + 1, 0);
  for (std::uint32_t i = 0; i < count; ++i) ++first[thread(i) + 1];
  for (std::size_t t = 0; t < thread_count; ++t) first[t + 1] += first[t];
  order.resize(count);
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::uint32_t i = 0; i < count; ++i) order[fill[thread(i)]++] = i;
  }
  std::vector<std::uint32_t> runs;  // start of each ascending run, then the group's end
  for (std::size_t t = 0; t < thread_count; ++t) {
    const std::uint32_t b = first[t], e = first[t + 1];
    runs.clear();
    runs.push_back(b);
    for (std::uint32_t k = b + 1; k < e; ++k) {
      if (before(order[k], order[k - 1])) runs.push_back(k);
    }
    if (runs.size() == 1) continue;
    if (runs.size() > 64) {
      std::stable_sort(order.begin() + b, order.begin() + e, before);
      continue;
    }
    runs.push_back(e);
    // Merge neighbouring runs until one is left (each pass halves their number).
    while (runs.size() > 2) {
      std::size_t kept = 0;
      for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
        if (r + 2 < runs.size()) {
          std::inplace_merge(order.begin() + runs[r], order.begin() + runs[r + 1],
                             order.begin() + runs[r + 2], before);
        }
        runs[kept++] = runs[r];
      }
      runs[kept++] = runs.back();
      runs.resize(kept);
    }
  }
}

}  // namespace

void OpWorkLinker::note_ranks_without_shapes(RecordSink& writer) const {
  std::map<std::int32_t, bool> shapes_of_rank;  // ranks with CPU operators -> any recorded with shapes
  for (const Thread& t : threads_) {
    if (t.ops) shapes_of_rank[t.rank] |= t.shapes;
  }
  for (const auto& [rank, shapes] : shapes_of_rank) {
    if (!shapes) {
      writer.add_diagnostic(
          rank, "info",
          "no shapes recorded (record with record_shapes=True): no FLOPs or bytes per operator");
    }
  }
}

OpWorkLinker::ThreadOrder OpWorkLinker::order_by_thread() const {
  // By start, the longer first on a tie (a child before its parent when both start in the same microsecond).
  ThreadOrder out;
  group_by_thread(
      ops_.size(), threads_.size(), [&](std::uint32_t i) { return ops_[i].thread; },
      [&](std::uint32_t x, std::uint32_t y) {
        const Op& a = ops_[x];
        const Op& b = ops_[y];
        return a.start != b.start ? a.start < b.start : a.end > b.end;
      },
      out.first, out.order);
  return out;
}

std::vector<std::int32_t> OpWorkLinker::counted_owners(const ThreadOrder& threads) {
  const auto counted = static_cast<std::int8_t>(OpWorkStatus::kCounted);
  const auto undetermined = static_cast<std::int8_t>(OpWorkStatus::kUndetermined);
  std::vector<std::int32_t> owner(ops_.size(), -1);
  // Whether an operator with a work formula encloses the operator (counted or not): an undetermined
  // operator inside one is part of its work (linear's addmm, softmax's _softmax, recorded without input
  // types), and a row of its own would count its shapes twice.
  std::vector<char> in_formula(ops_.size(), 0);
  std::vector<std::uint32_t> stack;
  for (std::size_t t = 0; t + 1 < threads.first.size(); ++t) {
    stack.clear();
    for (std::uint32_t k = threads.first[t]; k < threads.first[t + 1]; ++k) {
      const std::uint32_t i = threads.order[k];
      const Op& op = ops_[i];
      while (!stack.empty() && ops_[stack.back()].end <= op.start) stack.pop_back();
      const std::int32_t inherited = stack.empty() ? -1 : owner[stack.back()];
      const bool enclosed = !stack.empty() && (in_formula[stack.back()] || ops_[stack.back()].work >= 0);
      in_formula[i] = enclosed;
      const bool has_work = op.work >= 0 && works_[op.work].status == counted;
      if (inherited >= 0) {
        owner[i] = inherited;
        if (has_work) works_[op.work].status = static_cast<std::int8_t>(OpWorkStatus::kNested);
      } else if (has_work) {
        owner[i] = static_cast<std::int32_t>(i);
      }
      if (enclosed && op.work >= 0 && works_[op.work].status == undetermined)
        works_[op.work].status = static_cast<std::int8_t>(OpWorkStatus::kNested);
      stack.push_back(i);
    }
  }
  return owner;
}

std::vector<std::int32_t> OpWorkLinker::operator_of_activities(const ThreadOrder& threads,
                                                               const std::vector<std::int32_t>& owner) const {
  const std::size_t n = ops_.size();
  IdTable by_external;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (ops_[i].external_id != kNull) by_external.add(threads_[ops_[i].thread].rank, ops_[i].external_id, i);
  }
  by_external.build();

  // Each call's operator: the one its External id names when that one was open at the call; the others are
  // swept against their thread's operators for the innermost one open then.
  IdTable op_of_correlation;
  std::vector<std::uint32_t> unresolved;
  auto link = [&](const Call& c, std::int32_t op) {
    if (op >= 0 && owner[op] >= 0)
      op_of_correlation.add(threads_[c.thread].rank, c.correlation, static_cast<std::uint32_t>(op));
  };
  for (std::uint32_t ci = 0; ci < calls_.size(); ++ci) {
    const Call& c = calls_[ci];
    std::int32_t op = c.external_id == kNull ? -1 : by_external.find(threads_[c.thread].rank, c.external_id);
    if (op >= 0 && (c.start < ops_[op].start || c.start > ops_[op].end)) op = -1;
    if (op >= 0) {
      link(c, op);
    } else {
      unresolved.push_back(ci);
    }
  }
  if (!unresolved.empty()) {
    // By thread, then start.
    std::vector<std::uint32_t> first, order;
    group_by_thread(
        unresolved.size(), threads_.size(), [&](std::uint32_t u) { return calls_[unresolved[u]].thread; },
        [&](std::uint32_t x, std::uint32_t y) {
          return calls_[unresolved[x]].start < calls_[unresolved[y]].start;
        },
        first, order);
    std::vector<std::uint32_t> stack;
    std::uint32_t current = UINT32_MAX, k = 0;
    for (std::uint32_t u : order) {
      const Call& c = calls_[unresolved[u]];
      if (c.thread != current) {
        current = c.thread;
        stack.clear();
        k = threads.first[current];
      }
      while (k < threads.first[current + 1] && ops_[threads.order[k]].start <= c.start) {
        const std::uint32_t i = threads.order[k++];
        while (!stack.empty() && ops_[stack.back()].end <= ops_[i].start) stack.pop_back();
        stack.push_back(i);
      }
      while (!stack.empty() && ops_[stack.back()].end < c.start) stack.pop_back();
      if (!stack.empty()) link(c, static_cast<std::int32_t>(stack.back()));
    }
  }
  op_of_correlation.build();

  // An activity's operator: by correlation id, else (only in a trace without runtime calls: elsewhere an
  // activity's External id may be its correlation id) by its own External id when that operator began
  // before it.
  std::vector<std::int32_t> op_of_activity(activities_.size(), -1);
  for (std::uint32_t ai = 0; ai < activities_.size(); ++ai) {
    const Activity& a = activities_[ai];
    std::int32_t op = a.correlation == kNull ? -1 : op_of_correlation.find(a.rank, a.correlation);
    if (op < 0 && a.external_id != kNull && calls_.empty()) {
      op = by_external.find(a.rank, a.external_id);
      if (op >= 0 && ops_[op].start > a.start) op = -1;
    }
    op_of_activity[ai] = op;
  }
  return op_of_activity;
}

void OpWorkLinker::finish(RecordSink& writer) {
  note_ranks_without_shapes(writer);
  if (works_.empty()) {
    added_ops_.clear();
    added_calls_.clear();
    added_activities_.clear();
    return;
  }
  ops_ = added_ops_.take();
  calls_ = added_calls_.take();
  activities_ = added_activities_.take();
  const std::size_t n = ops_.size();
  const ThreadOrder threads = order_by_thread();
  // OWNER[i]: the counted operator (index into ops_) whose activities operator i's activities are: the
  // outermost enclosing operator (itself included) whose work was computed; -1 when none.
  const std::vector<std::int32_t> owner = counted_owners(threads);
  const std::vector<std::int32_t> op_of_activity = operator_of_activities(threads, owner);

  // Each counted operator's activities: how many and their summed duration (its op_work row), then its
  // op_work id, and the activities' shares of its work in activity order, which is the order of their ids
  // (kernel_work's rows then append to its table instead of landing all over it).
  std::vector<std::uint32_t> kernels(n, 0);
  std::vector<TimeNs> kernel_ns(n, 0);
  // Each kernel counts once, by its own class: a copy inside a GEMM (a memcpy or memset, or the kernel of a
  // nested copy operator) is memory traffic and not the GEMM's, unless the counted operator is itself a copy.
  auto counts_for_owner = [&](std::uint32_t ai, std::int32_t op) {
    if (op < 0 || owner[op] < 0) return false;
    return !(activities_[ai].copy || ops_[op].copy) || ops_[owner[op]].copy;
  };
  for (std::uint32_t ai = 0; ai < activities_.size(); ++ai) {
    const std::int32_t op = op_of_activity[ai];
    if (!counts_for_owner(ai, op)) continue;
    ++kernels[owner[op]];
    kernel_ns[owner[op]] += activities_[ai].end - activities_[ai].start;
  }
  // A nested operator gets no row: its work and its activities are its counted owner's, and a row of its own
  // would only invite counting them twice.
  const auto nested = static_cast<std::int8_t>(OpWorkStatus::kNested);
  std::vector<std::int64_t> op_id(n, kNull);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (ops_[i].work >= 0 && works_[ops_[i].work].status != nested)
      op_id[i] = write_op(writer, i, kernels[i], kernel_ns[i]);
  }
  for (std::uint32_t ai = 0; ai < activities_.size(); ++ai) {
    const std::int32_t op = op_of_activity[ai];
    if (!counts_for_owner(ai, op)) continue;
    const auto counted = static_cast<std::uint32_t>(owner[op]);
    const Work& w = works_[ops_[counted].work];
    const Activity& a = activities_[ai];
    const double share = kernel_ns[counted] > 0
                             ? static_cast<double>(a.end - a.start) / static_cast<double>(kernel_ns[counted])
                             : 1.0 / static_cast<double>(kernels[counted]);
    KernelWorkRecord kw;
    kw.activity_id = a.id;
    kw.rank = a.rank;
    kw.op_id = op_id[counted];
    kw.flops = w.flops * share;
    kw.bytes = w.bytes * share;
    writer.add_kernel_work(kw);
  }
}

std::int64_t OpWorkLinker::write_op(RecordSink& writer, std::uint32_t op_index, std::uint32_t kernels,
                                    TimeNs kernel_ns) const {
  const Op& op = ops_[op_index];
  const Work& w = works_[op.work];
  const Thread& thread = threads_[op.thread];
  OpWorkRecord r;
  r.rank = thread.rank;
  r.external_id = op.external_id;
  r.pid = thread.pid;
  r.tid = thread.tid;
  r.start_ns = op.start;
  r.name = w.name;
  r.status = static_cast<OpWorkStatus>(w.status);
  r.category = w.category != 0 ? w.category : kNull;
  r.flops = w.flops;
  r.bytes = w.bytes;
  r.input_dims = w.dims;
  r.input_types = w.types;
  r.kernels = kernels;
  r.kernel_ns = kernel_ns;
  return writer.add_op_work(r);
}

}  // namespace meshscope::kineto
