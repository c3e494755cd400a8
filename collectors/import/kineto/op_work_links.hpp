// Work per operator at import (docs/PROFILE.md "Work per operator"): the Kineto importer
// hands every CPU operator, runtime API call and GPU activity of a file to an OpWorkLinker; at the end of the
// file it computes the FLOPs and bytes of the operators whose shapes determine them
// (the formulas the job gives the import, analysis/measure/op_work.hpp) and attributes each to the GPU
// activities it launched:
//
//   * an activity belongs to the operator that launched it: the one whose External id its runtime call (by
//     correlation id) carries, when that operator was open at the call; else the innermost operator open on
//     the calling thread when the call started (traces whose External ids are correlation ids);
//   * an operator's work is counted once, by the outermost operator with a formula (aten::linear over
//     aten::addmm, scaled_dot_product_attention over _flash_attention_forward): the operators inside it are
//     "nested", their activities are its activities, and they get no op_work row of their own;
//   * a counted operator's FLOPs and bytes are split over its activities in proportion to their durations, so
//     every one of them shows the operator's achieved FLOP/s and bytes/s.
//
// Cost (docs/PERFORMANCE.md "Import"): 32 bytes per operator and call, one sort of the operators by thread
// and start, and a sweep over only the calls whose External id does not name the operator open at the call.
// Operators, calls and activities past a million each wait in a temporary file while the trace is read, and
// are read back only when some operator's work was computed: a file recorded without shapes links nothing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collectors/import/spilled_list.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::kineto {

class OpWorkLinker {
 public:
  // FORMULAS: what an operator's shapes cost; without them no operator's work is computed.
  explicit OpWorkLinker(const OperatorWorkFormulas& formulas) : formulas_(formulas) {}

  // Whether NAME has a work formula (its shapes are worth reading).
  bool has_formula(std::string_view name) const { return formulas_ && formulas_.has_formula(name); }

  // A CPU operator; SHAPES: it was recorded with "Input Dims"; DIMS, TYPES and CONCRETE are its args' JSON
  // text ("Input Dims", "Input type", "Concrete Inputs"), empty when not recorded or not kept (an operator
  // without a work formula).
  void add_op(RecordSink& writer, std::int32_t rank, std::int64_t pid, std::int64_t tid, TimeNs start,
              TimeNs end, std::string_view name, std::int64_t external_id, bool shapes, std::string_view dims,
              std::string_view types, std::string_view concrete);
  void add_call(std::int32_t rank, std::int64_t pid, std::int64_t tid, TimeNs start, std::int64_t correlation,
                std::int64_t external_id);
  // COPY: a memcpy or memset (never an operator's arithmetic).
  void add_activity(std::int32_t rank, std::int64_t activity_id, TimeNs start, TimeNs end,
                    std::int64_t correlation, std::int64_t external_id, bool copy = false);

  // Attributes and writes the op_work and kernel_work rows; ranks renamed by the writer's rewrite_rank move
  // with their rows. Writes a diagnostic per rank that has CPU operators but no shapes.
  void finish(RecordSink& writer);

 private:
  OperatorWorkFormulas formulas_;
  struct Op {
    TimeNs start, end;
    std::int64_t external_id;
    std::uint32_t thread;  // index into threads_
    std::int32_t work;     // index into works_, -1 when the op has no formula
    bool copy;             // a copy operator (copy_, contiguous, clone, to): its kernels move memory
  };
  struct Work {
    StringId name, dims, types;
    std::int8_t status;    // OpWorkStatus
    std::int8_t category;  // OpWorkRecord::category, 0 when not computed
    double flops, bytes;
  };
  struct Call {
    TimeNs start;
    std::int64_t correlation, external_id;
    std::uint32_t thread;
  };
  struct Activity {
    std::int64_t id;
    TimeNs start, end;
    std::int64_t correlation, external_id;
    std::int32_t rank;
    bool copy;  // a memcpy or memset
  };
  struct Thread {
    std::int32_t rank;
    std::int64_t pid, tid;
    bool shapes = false;
    bool ops = false;  // has CPU operators
  };
  // The operators grouped by thread, by start within each (the longer first on a tie): thread t's are
  // ops_[order[first[t] .. first[t + 1])].
  struct ThreadOrder {
    std::vector<std::uint32_t> first, order;
  };
  std::uint32_t thread_of(std::int32_t rank, std::int64_t pid, std::int64_t tid);
  void note_ranks_without_shapes(RecordSink& writer) const;
  ThreadOrder order_by_thread() const;
  // Per operator, the outermost enclosing counted operator (itself included), -1 when none; counted
  // operators inside another become kNested, and so do undetermined ones inside any operator with a formula.
  std::vector<std::int32_t> counted_owners(const ThreadOrder& threads);
  // Per activity, the operator that launched it (index into ops_; -1 when unknown or not under a counted
  // one).
  std::vector<std::int32_t> operator_of_activities(const ThreadOrder& threads,
                                                   const std::vector<std::int32_t>& owner) const;
  // Writes operator OP_INDEX's op_work row (KERNELS activities of KERNEL_NS in all are its own); returns its
  // id.
  std::int64_t write_op(RecordSink& writer, std::uint32_t op_index, std::uint32_t kernels,
                        TimeNs kernel_ns) const;

  // Operators repeat the same name, shapes and types many times (every layer, every step): each distinct
  // combination is parsed and interned once, and its Work reused.
  struct ShapeKey {
    std::string name, dims, types, concrete;
    bool operator==(const ShapeKey&) const = default;
  };
  struct ShapeKeyView {
    std::string_view name, dims, types, concrete;
  };
  struct ShapeHash {
    using is_transparent = void;
    std::size_t operator()(const ShapeKeyView& k) const;
    std::size_t operator()(const ShapeKey& k) const {
      return (*this)(ShapeKeyView{k.name, k.dims, k.types, k.concrete});
    }
  };
  struct ShapeEqual {
    using is_transparent = void;
    static ShapeKeyView view(const ShapeKey& k) { return {k.name, k.dims, k.types, k.concrete}; }
    static ShapeKeyView view(const ShapeKeyView& k) { return k; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const ShapeKeyView x = view(a), y = view(b);
      return x.name == y.name && x.dims == y.dims && x.types == y.types && x.concrete == y.concrete;
    }
  };
  Work compute_work(RecordSink& writer, std::string_view name, std::string_view dims, std::string_view types,
                    std::string_view concrete);

  // What the file gave, kept out of memory while it is read (most files without shapes never need it back).
  import::SpilledList<Op> added_ops_;
  import::SpilledList<Call> added_calls_;
  import::SpilledList<Activity> added_activities_;
  // The same, in memory once the file is complete and some operator's work was computed (finish).
  std::vector<Op> ops_;
  std::vector<Call> calls_;
  std::vector<Activity> activities_;
  std::vector<Work> works_;
  std::unordered_map<ShapeKey, Work, ShapeHash, ShapeEqual> work_of_shapes_;
  std::vector<Thread> threads_;
  std::unordered_map<std::int64_t, std::vector<std::uint32_t>> threads_by_tid_;
  std::uint32_t last_thread_ = 0;
  bool any_thread_ = false;
};

}  // namespace meshscope::kineto
