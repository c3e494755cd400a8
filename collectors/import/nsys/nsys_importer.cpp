// Nsight Systems SQLite export importer. One pass per source table, each a single SELECT of the columns the
// export has (looked up by name), rows handed straight to the ProfileWriter. Times in the export are ns since
// the capture session started; the profile stores them plus the session's UTC start (ranks.clock_base_ns), so
// several exports of one job line up on wall-clock time as Kineto files do with baseTimeNanoseconds.
//
// [SECTION] export schema: tables, columns, version
// [SECTION] processes and ranks
// [SECTION] NVTX (ranges, marks, NCCL collectives)
// [SECTION] CUDA API calls
// [SECTION] GPU activities (kernels, graphs, memcpy, memset, sync)
// [SECTION] the CPU side (OS runtime calls, thread scheduling, CPU samples)
// [SECTION] devices, streams, threads, rank facts
#include "collectors/import/nsys/nsys_importer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "collectors/import/collective_names.hpp"
#include "collectors/import/input_file.hpp"
#include "profiler/error.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/timing.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::nsys {
namespace {

// NVTX event types (NVIDIA: "NVTX Event Type Values").
constexpr std::int64_t kNvtxCategory = 33, kNvtxMark = 34, kNvtxThread = 39, kNvtxPushPopRange = 59,
                       kNvtxStartEndRange = 60, kNvtxtPushPopRange = 70, kNvtxtStartEndRange = 71,
                       kNvtxtMark = 72, kNvtxDomainCreate = 75, kNvtxDomainDestroy = 76;
// ENUM_NSYS_EVENT_CLASS values in CUPTI_ACTIVITY_KIND_RUNTIME: runtime and driver calls, and the CUDA
// backtrace records (67) that repeat a call to carry its call stack.
constexpr std::int64_t kEventClassCudaRuntime = 0, kEventClassCudaDriver = 1, kEventClassCudaEglDriver = 13;

// An error of the import itself (as opposed to one the SQLite layer reports about the file).
class ImportError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void import_fail(fmt::format_string<Args...> format, Args&&... args) {
  throw ImportError(fmt::format(format, std::forward<Args>(args)...));
}

// CUPTI_ACTIVITY_MEMCPY_KIND / ENUM_CUDA_MEMCPY_OPER, as Kineto spells them.
std::string_view copy_kind_name(std::int64_t kind) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < static_cast<std::int64_t>(kNames.size()) ? kNames[static_cast<std::size_t>(kind)]
                                                                      : "Unknown";
}

// ENUM_CUDA_MEM_KIND (Nsight's numbering, which differs from CUPTI's).
std::string_view memory_kind_name(std::int64_t kind) {
  static constexpr std::array<std::string_view, 7> kNames = {"Pageable", "Pinned", "Device", "Array",
                                                             "Managed",  "Device", "Managed"};
  return kind >= 0 && kind < static_cast<std::int64_t>(kNames.size()) ? kNames[static_cast<std::size_t>(kind)]
                                                                      : "Unknown";
}

// CUpti_ActivitySynchronizationType, as Kineto names cuda_sync events.
std::string_view sync_name(std::int64_t type) {
  switch (type) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Sync";
  }
}

std::int64_t process_key(std::int64_t global_id) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(global_id) >> 24);
}

// The rank an "MPI Rank N" thread name (Nsight's MPI wrappers name the main thread so) states, or -1.
std::int64_t mpi_rank_from_name(std::string_view name) {
  constexpr std::string_view kPrefix = "MPI Rank ";
  if (!name.starts_with(kPrefix)) return -1;
  name.remove_prefix(kPrefix.size());
  std::int64_t rank = -1;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), rank);
  if (ec != std::errc() || end != name.data() + name.size()) return -1;
  return rank;
}

struct Process {
  std::int64_t key = 0;  // globalPid >> 24: (hw, vm, pid)
  std::int64_t pid = 0;
  std::int32_t rank = 0;
  std::int64_t mpi_rank = -1;
  std::string name;
  std::uint64_t gpu_events = 0, cpu_events = 0;
  std::uint64_t negative_times = 0;
  std::uint64_t backwards_times = 0;  // events that ended before they started: kept with zero length
  bool uses_nccl = false;
  // NCCL collective NVTX ranges (indexes into Importer::nccl_) that launched each correlation id.
  std::unordered_map<std::int64_t, std::size_t> nccl_launches;
  // NCCL groups (indexes into Importer::nccl_groups_) whose ncclGroupEnd range launched each correlation id,
  // with the launching call's start (export clock).
  std::unordered_map<std::int64_t, std::pair<std::size_t, std::int64_t>> group_launches;
};

constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);

// One NCCL-domain NVTX range that brackets a collective; handed to the writer at the end, once the kernels it
// launched have told their algorithm and protocol.
struct NcclCollective {
  CollectiveRecord record;
  std::string op;  // record.op as text
  std::int64_t pid = 0, tid = 0;
  std::int64_t global_tid = 0;
  TimeNs start = 0, end = 0;  // export clock, for matching API calls
  bool launched = false;      // its own range launched a kernel
  bool attached = false;      // written on a kernel of its group (not handed to add_cpu_collective)
};

// An NCCL kernel launched from an ncclGroupEnd range, waiting for the group's collectives.
struct GroupKernel {
  std::int32_t rank = 0;
  std::int64_t activity = 0;
  TimeNs start_ns = 0, end_ns = 0;  // profile clock
  std::int64_t call_start = 0, correlation = 0;
  import::NcclKernelName name;
};

// One outermost ncclGroupStart..ncclGroupEnd bracket on one thread: the collective ranges issued inside it
// (issue order) and the NCCL kernels its ncclGroupEnd launched.
struct NcclGroup {
  std::vector<std::size_t> collectives;  // indexes into Importer::nccl_
  std::vector<GroupKernel> kernels;
  bool start_missing = false;  // an ncclGroupEnd whose ncclGroupStart lies before the capture
};

// An ncclGroupEnd range (export clock) and the group it closes (or, nested, belongs to).
struct GroupEndRange {
  std::int64_t start = 0, end = 0;
  std::size_t group = 0;
};

// Which NCCL group call an NCCL-domain range is: 1 ncclGroupStart, 2 ncclGroupEnd, 0 neither.
int nccl_group_call(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size() && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
  std::size_t end = begin;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
    ++end;
  }
  const std::string_view name = text.substr(begin, end - begin);
  return name == "ncclGroupStart" ? 1 : name == "ncclGroupEnd" ? 2 : 0;
}

// Whether a collective of operation OP (as parse_nccl_range normalises it) can have run in a kernel whose
// name states KERNEL_OP (empty: a generic kernel, which runs any).
bool nccl_ops_compatible(std::string_view op, std::string_view kernel_op) {
  if (kernel_op.empty() || op == kernel_op) return true;
  return kernel_op == "sendrecv" && (op == "send" || op == "recv" || op == "alltoall");
}

// Assigns each of a group's collectives (issue order, operations OPS) to one of its KERNELS (launch order):
// returns the kernel index per collective. See docs/NSYS.md, "NCCL groups".
std::vector<std::size_t> assign_group(const std::vector<std::string_view>& ops,
                                      const std::vector<GroupKernel>& kernels) {
  const std::size_t n = ops.size(), m = kernels.size();
  std::vector<std::size_t> to(n, 0);
  if (m <= 1) return to;  // one kernel ran the whole group (fused)
  auto compatible = [&](std::size_t i, std::size_t k) {
    return nccl_ops_compatible(ops[i], kernels[k].name.op);
  };
  bool pairwise = n == m, homogeneous = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (pairwise && !compatible(i, i)) pairwise = false;
    for (std::size_t k = 0; k < m && homogeneous; ++k) homogeneous = compatible(i, k);
  }
  if (pairwise || homogeneous) {
    // One kernel per operation: k-th to k-th. Fewer kernels than operations: NCCL split the group into
    // several launches, each running the next operations in order; more: the first ones.
    for (std::size_t i = 0; i < n; ++i) to[i] = n > m ? i * m / n : i;
    return to;
  }
  // Mixed operations that do not line up: each takes the first kernel of its operation that has none yet,
  // else joins the last kernel of its operation that has some, else the first free kernel, else the last
  // used.
  std::vector<bool> used(m, false);
  std::size_t last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t pick = m;
    for (std::size_t k = 0; k < m && pick == m; ++k) {
      if (!used[k] && compatible(i, k)) pick = k;
    }
    for (std::size_t k = m; k-- > 0 && pick == m;) {
      if (used[k] && compatible(i, k)) pick = k;
    }
    for (std::size_t k = 0; k < m && pick == m; ++k) {
      if (!used[k]) pick = k;
    }
    if (pick == m) pick = last;
    to[i] = last = pick;
    used[pick] = true;
  }
  return to;
}

class Importer {
 public:
  Importer(const std::filesystem::path& path, ProfileWriter& writer, const RankClaim& claim,
           std::vector<std::string>* notes)
      : path_(path), writer_(writer), claim_(claim), notes_(notes) {}

  std::vector<ImportedRank> run() {
    try {
      db_ = sql::Database(path_, true);
      return run_import();
    } catch (const ImportError&) {
      throw;
    } catch (const Error& e) {
      // The SQLite layer names the file it failed on; anything about the source file means it is unreadable.
      const std::string prefix = path_.string() + ": ";
      const std::string message = e.what();
      // A value of the wrong type is named as the SQLite layer names it (table.column row N).
      if (message.starts_with(prefix) && message.find(" where an integer belongs") == std::string::npos) {
        import_fail("{}: unreadable or corrupt SQLite database ({})", path_.string(),
                    message.substr(prefix.size()));
      }
      throw;
    }
  }

 private:
  // [SECTION] export schema: tables, columns, version

  // Names are compared upper case, as SQLite resolves them. Only ordinary tables are read: a view (or any
  // other object) under the name of a table the importer reads is refused, so the file's own SQL never runs.
  static std::string upper(std::string_view name) {
    std::string text(name);
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
  }

  void read_tables() {
    sql::Statement s = db_.prepare("SELECT name, type, sql FROM sqlite_master");
    while (s.step()) {
      const bool table =
          s.column_text(1) == "table" && upper(s.column_text(2)).rfind("CREATE VIRTUAL", 0) != 0;
      (table ? tables_ : other_objects_).insert(upper(s.column_text(0)));
    }
  }

  bool has(std::string_view table) const {
    const std::string name = upper(table);
    if (other_objects_.count(name)) {
      import_fail("{}: {} is not an ordinary table (a view or virtual table; meshscope reads only tables)",
                  path_.string(), table);
    }
    return tables_.count(name) > 0;
  }

  // The stored columns of TABLE; a column computed when read (its expression would run) counts as absent.
  std::set<std::string> columns_of(std::string_view table) {
    std::set<std::string> columns;
    const auto declared = db_.table_columns(table);
    if (!declared) return columns;
    for (const auto& [name, type] : *declared) {
      if (type != sql::kComputedColumn) columns.insert(name);
    }
    return columns;
  }

  // Steps S, a SELECT from TABLE, keeping the table and the row's position for messages.
  bool next(sql::Statement& s, const char* table) {
    if (!s.step()) return false;
    if (table_ != table) {
      table_ = table;
      row_ = 0;
    }
    ++row_;
    return true;
  }

  [[noreturn]] void bad_row(std::string_view problem) const {
    import_fail("{}: {} row {}: {}", path_.string(), table_ ? table_ : "?", row_, problem);
  }

  // "SELECT a, NULL, c FROM table": WANTED columns that TABLE lacks read as NULL.
  std::string select(std::string_view table, std::initializer_list<std::string_view> wanted,
                     std::string_view tail = {}) {
    const auto columns = columns_of(table);
    std::string sql = "SELECT ";
    bool first = true;
    for (const auto column : wanted) {
      if (!first) sql += ", ";
      first = false;
      if (columns.count(std::string(column))) {
        sql += fmt::format("\"{}\"", column);
      } else {
        sql += "NULL";
      }
    }
    sql += fmt::format(" FROM \"{}\"", table);
    if (!tail.empty()) sql += fmt::format(" {}", tail);
    return sql;
  }

  bool has_column(std::string_view table, std::string_view column) {
    return columns_of(table).count(std::string(column)) > 0;
  }

  void check_export() {
    if (has("meta") && has("activities") && has("ranks")) {
      import_fail("{}: a meshscope profile, not an Nsight Systems export (open it with info, report or view)",
                  path_.string());
    }
    const char* meta_table = has("META_DATA_EXPORT")   ? "META_DATA_EXPORT"
                             : has("EXPORT_META_DATA") ? "EXPORT_META_DATA"
                                                       : nullptr;
    if (!meta_table && !has("StringIds")) {
      import_fail(
          "{}: an SQLite database but not an Nsight Systems export (no META_DATA_EXPORT, EXPORT_META_DATA or "
          "StringIds table)",
          path_.string());
    }
    if (meta_table) {
      sql::Statement s = db_.prepare(select(meta_table, {"name", "value"}));
      while (s.step()) {
        const std::string name = s.column_text(0);
        if (name == "EXPORT_SCHEMA_VERSION") schema_version_ = s.column_text(1);
        if (name == "EXPORT_PRODUCT_VERSION" || name == "NSIGHT_SYSTEMS_VERSION")
          product_version_ = s.column_text(1);
      }
    }
    std::int64_t major = -1;
    std::from_chars(schema_version_.data(), schema_version_.data() + schema_version_.size(), major);
    if (major != 2 && major != 3) {
      version_warning_ = fmt::format(
          "{}: Nsight Systems export schema {} is not one meshscope knows (2.x, 3.x); imported the tables "
          "and columns it recognises",
          path_.filename().string(), schema_version_.empty() ? std::string("(unstated)") : schema_version_);
      if (notes_) notes_->push_back(version_warning_);
    }
  }

  void read_strings() {
    if (!has("StringIds")) return;
    sql::Statement s = db_.prepare("SELECT id, value FROM StringIds");
    while (s.step()) {
      const std::int64_t id = s.column_int(0);
      if (id < 0) continue;
      if (static_cast<std::uint64_t>(id) >= strings_.size()) {
        if (id > 64 * 1024 * 1024) continue;  // not a dense id space; never referenced in practice
        strings_.resize(static_cast<std::size_t>(id) + 1);
      }
      strings_[static_cast<std::size_t>(id)] = s.column_text(1);
    }
    interned_.assign(strings_.size(), kNoString);
  }

  const std::string& string_of(std::int64_t id) const {
    static const std::string kEmpty;
    if (id < 0 || static_cast<std::uint64_t>(id) >= strings_.size()) return kEmpty;
    return strings_[static_cast<std::size_t>(id)];
  }

  // The writer's id of StringIds entry ID (interned once).
  StringId intern_id(std::int64_t id) {
    if (id < 0 || static_cast<std::uint64_t>(id) >= strings_.size()) return kNoString;
    auto& slot = interned_[static_cast<std::size_t>(id)];
    if (slot == kNoString) slot = writer_.intern(strings_[static_cast<std::size_t>(id)]);
    return slot;
  }

  // [SECTION] processes and ranks

  void read_session_start() {
    if (!has("TARGET_INFO_SESSION_START_TIME")) return;
    sql::Statement s = db_.prepare(select("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}));
    if (s.step() && !s.column_is_null(0)) {
      base_ns_ = s.column_int(0);
      has_base_ = true;
      if (!time_in_range(base_ns_)) {
        import_fail("{}: TARGET_INFO_SESSION_START_TIME: utcEpochNs {} is out of range", path_.string(),
                    base_ns_);
      }
    }
  }

  void read_host_names() {
    if (!has("TARGET_INFO_SYSTEM_ENV")) return;
    sql::Statement s =
        db_.prepare(select("TARGET_INFO_SYSTEM_ENV", {"globalVid", "value"}, "WHERE name = 'Hostname'"));
    while (s.step()) {
      const std::int64_t vid = s.column_int(0);
      host_names_[vid == kNull ? 0 : static_cast<std::int64_t>(static_cast<std::uint64_t>(vid) >> 48)] =
          s.column_text(1);
    }
  }

  // Names of threads (NVTX-assigned names win over OS names) and the MPI ranks threads state.
  void read_threads_and_mpi() {
    if (has("ThreadNames")) {
      sql::Statement s = db_.prepare(select("ThreadNames", {"globalTid", "nameId"}));
      while (s.step()) {
        if (s.column_is_null(0)) continue;
        thread_names_[s.column_int(0)] = string_of(s.column_int(1));
      }
    }
    if (has("NVTX_EVENTS")) {
      sql::Statement s =
          db_.prepare(select("NVTX_EVENTS", {"globalTid", "text", "textId", "domainId", "eventType"},
                             fmt::format("WHERE eventType IN ({}, {})", kNvtxThread, kNvtxDomainCreate)));
      while (s.step()) {
        if (s.column_is_null(0)) continue;
        const std::int64_t gtid = s.column_int(0);
        std::string text = s.column_is_null(1) ? string_of(s.column_int(2)) : s.column_text(1);
        if (s.column_int(4) == kNvtxThread) {
          if (!text.empty()) thread_names_[gtid] = std::move(text);
        } else {
          domains_[{process_key(gtid), s.column_int_or(3, 0)}] = std::move(text);
        }
      }
    }
    for (const auto& [gtid, name] : thread_names_) {
      const std::int64_t rank = mpi_rank_from_name(name);
      if (rank >= 0) mpi_ranks_.emplace(process_key(gtid), rank);
    }
    if (has("MPI_RANKS")) {  // authoritative where present
      sql::Statement s = db_.prepare(select("MPI_RANKS", {"globalTid", "rank"}));
      while (next(s, "MPI_RANKS")) {
        if (s.column_is_null(0) || s.column_is_null(1)) continue;
        const std::int64_t rank = s.column_int(1);
        if (rank < 0 || rank > kMaxRank) bad_row(fmt::format("rank {} is out of range", rank));
        mpi_ranks_[process_key(s.column_int(0))] = rank;
      }
    }
  }

  // Every process that recorded an event becomes a rank: MPI ranks as stated, the others in pid order.
  void find_processes() {
    std::vector<std::string> parts;
    auto add = [&](std::string_view table, std::string_view column) {
      if (has(table) && has_column(table, column)) {
        parts.push_back(fmt::format("SELECT DISTINCT \"{}\" >> 24 FROM \"{}\" WHERE \"{}\" IS NOT NULL",
                                    column, table, column));
      }
    };
    for (const char* table :
         {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"}) {
      add(table, "globalPid");
    }
    add("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid");
    if (has("NVTX_EVENTS")) {
      parts.push_back(
          fmt::format("SELECT DISTINCT globalTid >> 24 FROM NVTX_EVENTS WHERE globalTid IS NOT NULL AND "
                      "eventType NOT IN ({}, {}, {}, {})",
                      kNvtxCategory, kNvtxThread, kNvtxDomainCreate, kNvtxDomainDestroy));
    }
    std::set<std::int64_t> keys;
    for (const auto& part : parts) {
      sql::Statement s = db_.prepare(part);
      while (s.step()) keys.insert(s.column_int(0));
    }
    if (keys.empty()) {
      import_fail("{}: the Nsight Systems export holds no CUDA or NVTX events to import", path_.string());
    }
    std::map<std::int64_t, std::string> process_names;
    if (has("PROCESSES")) {
      sql::Statement s = db_.prepare(select("PROCESSES", {"globalPid", "name"}));
      while (s.step()) {
        if (!s.column_is_null(0)) process_names[process_key(s.column_int(0))] = s.column_text(1);
      }
    }
    std::vector<Process*> order;
    for (const auto key : keys) {
      auto& p = processes_[key];
      p.key = key;
      p.pid = key & 0xffffff;
      auto mpi = mpi_ranks_.find(key);
      if (mpi != mpi_ranks_.end()) p.mpi_rank = mpi->second;
      auto name = process_names.find(key);
      if (name != process_names.end()) p.name = name->second;
      order.push_back(&p);
    }
    // MPI ranks first, so that processes without one take ranks no MPI rank of this export wants.
    std::stable_sort(order.begin(), order.end(), [](const Process* a, const Process* b) {
      if ((a->mpi_rank >= 0) != (b->mpi_rank >= 0)) return a->mpi_rank >= 0;
      return a->mpi_rank >= 0 ? a->mpi_rank < b->mpi_rank : a->pid < b->pid;
    });
    const std::int64_t file_rank = order.size() == 1 ? rank_from_file_name(path_) : -1;
    const std::string source_file = std::filesystem::absolute(path_).lexically_normal().string();
    for (Process* p : order) {
      std::int64_t wanted = -1;
      if (p->mpi_rank >= 0) {
        wanted = p->mpi_rank;
        rank_sources_[p->key] = "mpi";
      } else if (file_rank >= 0) {
        wanted = file_rank;
        rank_sources_[p->key] = "filename";
      } else {
        rank_sources_[p->key] = "nsys-process";
      }
      // Processes of different nodes (VMs) of one export may share a pid: name the node then.
      const bool shared_pid =
          std::count_if(order.begin(), order.end(), [&](const Process* q) { return q->pid == p->pid; }) > 1;
      const std::string key = shared_pid ? fmt::format("{}#{}.{}", source_file, p->key >> 24, p->pid)
                                         : fmt::format("{}#{}", source_file, p->pid);
      p->rank = claim_(key, wanted, rank_sources_[p->key]);
    }
    source_file_ = source_file;
  }

  Process* process(std::int64_t global_id) {
    if (global_id == kNull) return nullptr;
    const std::int64_t key = process_key(global_id);
    if (last_process_ && last_process_->key == key) return last_process_;
    auto it = processes_.find(key);
    last_process_ = it == processes_.end() ? nullptr : &it->second;
    return last_process_;
  }

  // An export time on the profile clock (plus the session start), refused when missing or out of range.
  TimeNs profile_time(Process& p, std::int64_t t) {
    if (t == kNull) bad_row("a start or end time is missing (NULL)");
    if (t < 0) ++p.negative_times;
    TimeNs out = 0;
    if (__builtin_add_overflow(t, base_ns_, &out) || !time_in_range(out)) {
      bad_row(fmt::format("time {} ns (after the session start at {} ns) is out of range", t, base_ns_));
    }
    return out;
  }

  // The end of an interval that starts at START: one that ends before it starts is kept with zero length
  // (counted and reported), as the profile stores end_ns >= start_ns.
  TimeNs profile_end(Process& p, TimeNs start, std::int64_t t) {
    const TimeNs end = profile_time(p, t);
    if (end >= start) return end;
    ++p.backwards_times;
    return start;
  }

  // [SECTION] NVTX (ranges, marks, NCCL collectives)

  void read_nvtx() {
    if (!has("NVTX_EVENTS")) return;
    PhaseTimer timer("nsys: NVTX");
    sql::Statement s =
        db_.prepare(select("NVTX_EVENTS",
                           {"start", "end", "eventType", "globalTid", "text", "textId", "domainId",
                            "jsonText", "uint64Value", "int64Value", "uint32Value", "int32Value"},
                           fmt::format("WHERE eventType NOT IN ({}, {}, {}, {})", kNvtxCategory, kNvtxThread,
                                       kNvtxDomainCreate, kNvtxDomainDestroy)));
    std::map<std::pair<std::int64_t, std::int64_t>, StringId> domain_ids;
    const StringId default_domain = writer_.intern("NVTX");
    std::vector<NcclCall> nccl_calls;
    while (next(s, "NVTX_EVENTS")) {
      const std::int64_t type = s.column_int(2);
      const bool mark = type == kNvtxMark || type == kNvtxtMark;
      if (!mark && type != kNvtxPushPopRange && type != kNvtxStartEndRange && type != kNvtxtPushPopRange &&
          type != kNvtxtStartEndRange) {
        ++skipped_nvtx_;
        continue;
      }
      const std::int64_t gtid = s.column_int(3);
      Process* p = process(gtid);
      if (!p) {
        ++orphans_;
        continue;
      }
      const GlobalId id = decode_global_id(gtid);
      const std::int64_t start = s.column_int(0);
      std::int64_t end = s.column_int(1);
      if (mark) {
        end = start;
      } else if (end == kNull || end < start) {
        ++unended_ranges_;
        end = start;
      }
      RangeRecord r;
      r.rank = p->rank;
      r.kind = RangeKind::kNvtx;
      r.pid = id.pid;
      r.tid = id.tid;
      r.start_ns = profile_time(*p, start);
      r.end_ns = profile_time(*p, end);
      std::string text_storage;
      std::string_view text;
      if (!s.column_is_null(4)) {
        text_storage = s.column_text(4);
        text = text_storage;
        r.name = writer_.intern(text);
      } else {
        text = string_of(s.column_int(5));
        r.name = intern_id(s.column_int(5));
      }
      if (r.name == kNoString) r.name = writer_.intern("(unnamed)");
      const std::int64_t domain = s.column_int_or(6, 0);
      std::string_view domain_name;
      if (domain != 0) {
        auto it = domains_.find({p->key, domain});
        if (it != domains_.end()) domain_name = it->second;
        auto& category = domain_ids[{p->key, domain}];
        if (category == kNoString)
          category = domain_name.empty() ? default_domain : writer_.intern(domain_name);
        r.category = category;
      } else {
        r.category = default_domain;
      }
      if (text.starts_with("ProfilerStep#")) {
        std::int64_t step = 0;
        const auto digits = text.substr(13);
        const auto [end_ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
        if (ec == std::errc() && end_ptr == digits.data() + digits.size()) {
          r.kind = RangeKind::kStep;
          r.step = step;
        }
      }
      writer_.add_range(r);
      note_thread(p->rank, id.pid, id.tid);
      ++p->cpu_events;
      ++nvtx_events_;
      if (!mark && domain_name == "NCCL") {
        const int group_call = nccl_group_call(text);
        if (group_call != 0) {
          nccl_calls.push_back({gtid, start, end, group_call, 0});
        } else if (add_nccl_range(*p, s, gtid, id, start, end, text, r)) {
          nccl_calls.push_back({gtid, start, end, 0, nccl_.size() - 1});
        }
      }
    }
    find_nccl_groups(nccl_calls);
    // API calls are matched to the NCCL ranges that enclose them per thread, by start time.
    for (std::size_t i = 0; i < nccl_.size(); ++i) nccl_by_thread_[nccl_[i].global_tid].push_back(i);
    for (auto& [gtid, indexes] : nccl_by_thread_) {
      std::sort(indexes.begin(), indexes.end(),
                [&](std::size_t a, std::size_t b) { return nccl_[a].start < nccl_[b].start; });
    }
  }

  // Adds the collective an NCCL-domain range brackets; false when it is not communication.
  bool add_nccl_range(Process& p, const sql::Statement& s, std::int64_t gtid, const GlobalId& id,
                      std::int64_t start, std::int64_t end, std::string_view text, const RangeRecord& r) {
    p.uses_nccl = true;
    std::int64_t payload = kNull;
    for (int column = 8; column <= 11 && payload == kNull; ++column) payload = s.column_int(column);
    const std::string json = s.column_text(7);
    const auto parsed = parse_nccl_range(text, json, payload);
    if (!parsed) return false;
    NcclCollective c;
    c.record.rank = p.rank;
    c.record.op = writer_.intern(parsed->op);
    c.op = parsed->op;
    c.record.in_bytes = parsed->bytes;
    c.record.out_bytes = parsed->bytes;
    if (parsed->op == "allgather") c.record.out_bytes = kNull;     // NCCL states the send size
    if (parsed->op == "reducescatter") c.record.in_bytes = kNull;  // NCCL states the receive size
    c.record.in_nelems = parsed->count;
    c.record.group_size = parsed->group_size;
    c.record.communicator = writer_.intern(parsed->communicator);
    c.record.dtype = writer_.intern(parsed->dtype);
    c.record.start_ns = r.start_ns;
    c.record.end_ns = r.end_ns;
    c.record.source = "nvtx";
    c.pid = id.pid;
    c.tid = id.tid;
    c.global_tid = gtid;
    c.start = start;
    c.end = end;
    nccl_.push_back(c);
    return true;
  }

  // An NCCL-domain range of interest to grouping: ncclGroupStart (kind 1), ncclGroupEnd (2) or a collective
  // (0, COLLECTIVE indexes nccl_).
  struct NcclCall {
    std::int64_t gtid = 0, start = 0, end = 0;
    int kind = 0;
    std::size_t collective = 0;
  };

  // NCCL groups are per thread and nest (only the outermost ncclGroupEnd launches): walks each thread's
  // NCCL calls in time order, giving the collectives issued between an outermost ncclGroupStart and its
  // ncclGroupEnd one group, and recording the group's ncclGroupEnd ranges for matching the launches. An
  // ncclGroupEnd without a ncclGroupStart (the capture began inside the group) closes a group of the
  // collectives issued since the thread's previous group.
  void find_nccl_groups(std::vector<NcclCall>& calls) {
    std::stable_sort(calls.begin(), calls.end(), [](const NcclCall& a, const NcclCall& b) {
      if (a.gtid != b.gtid) return a.gtid < b.gtid;
      if (a.start != b.start) return a.start < b.start;
      return a.end > b.end;  // an enclosing range first
    });
    std::int64_t thread = 0;
    int depth = 0;
    std::vector<std::size_t> outside;  // collectives issued outside groups since the previous group
    for (const auto& call : calls) {
      if (call.gtid != thread) {  // a group left open on the previous thread stays without kernels
        depth = 0;
        outside.clear();
      }
      thread = call.gtid;
      if (call.kind == 1) {
        if (depth++ == 0) nccl_groups_.emplace_back();
        outside.clear();
      } else if (call.kind == 2) {
        if (depth == 0) {
          nccl_groups_.push_back({std::move(outside), {}, true});
          outside.clear();
          ++depth;
        }
        group_ends_by_thread_[call.gtid].push_back({call.start, call.end, nccl_groups_.size() - 1});
        --depth;
      } else if (depth > 0) {
        nccl_groups_.back().collectives.push_back(call.collective);
      } else {
        outside.push_back(call.collective);
      }
    }
  }

  // The ncclGroupEnd range on thread GTID that encloses time T: its group, or kNoGroup.
  std::size_t enclosing_group_end(std::int64_t gtid, std::int64_t t) const {
    auto it = group_ends_by_thread_.find(gtid);
    if (it == group_ends_by_thread_.end()) return kNoGroup;
    const auto& ends = it->second;  // in start order
    auto at = std::upper_bound(ends.begin(), ends.end(), t,
                               [](std::int64_t time, const GroupEndRange& e) { return time < e.start; });
    for (int looked = 0; at != ends.begin() && looked < 8; ++looked) {
      --at;
      if (at->end >= t) return at->group;
    }
    return kNoGroup;
  }

  // The NCCL collective range on thread GTID that encloses time T, or nullptr.
  const std::size_t* enclosing_nccl(std::int64_t gtid, std::int64_t t) const {
    auto it = nccl_by_thread_.find(gtid);
    if (it == nccl_by_thread_.end()) return nullptr;
    const auto& indexes = it->second;
    auto at = std::upper_bound(indexes.begin(), indexes.end(), t,
                               [&](std::int64_t time, std::size_t i) { return time < nccl_[i].start; });
    for (int looked = 0; at != indexes.begin() && looked < 8; ++looked) {
      --at;
      if (nccl_[*at].end >= t) return &*at;
    }
    return nullptr;
  }

  // [SECTION] CUDA API calls

  void read_api_calls() {
    if (!has("CUPTI_ACTIVITY_KIND_RUNTIME")) return;
    PhaseTimer timer("nsys: API calls");
    sql::Statement s =
        db_.prepare(select("CUPTI_ACTIVITY_KIND_RUNTIME",
                           {"start", "end", "globalTid", "correlationId", "nameId", "eventClass"}));
    struct ApiName {
      StringId id = kNoString;
      bool driver = false;
      bool known = false;
    };
    std::vector<ApiName> names(strings_.size());
    const bool any_nccl = !nccl_.empty() || !group_ends_by_thread_.empty();
    while (next(s, "CUPTI_ACTIVITY_KIND_RUNTIME")) {
      const std::int64_t gtid = s.column_int(2);
      Process* p = process(gtid);
      if (!p) {
        ++orphans_;
        continue;
      }
      const std::int64_t event_class = s.column_int(5);
      if (event_class != kNull && event_class != kEventClassCudaRuntime &&
          event_class != kEventClassCudaDriver && event_class != kEventClassCudaEglDriver) {
        ++skipped_api_records_;
        continue;
      }
      const GlobalId id = decode_global_id(gtid);
      ApiCallRecord c;
      c.rank = p->rank;
      c.pid = id.pid;
      c.tid = id.tid;
      const std::int64_t start = s.column_int(0);
      c.start_ns = profile_time(*p, start);
      c.end_ns = profile_end(*p, c.start_ns, s.column_int(1));
      c.correlation = s.column_int(3);
      const std::int64_t name_id = s.column_int(4);
      bool driver = event_class == kEventClassCudaDriver || event_class == kEventClassCudaEglDriver;
      if (name_id >= 0 && static_cast<std::uint64_t>(name_id) < names.size()) {
        auto& n = names[static_cast<std::size_t>(name_id)];
        if (!n.known) {
          const std::string_view base = api_base_name(strings_[static_cast<std::size_t>(name_id)]);
          n.id = writer_.intern(base);
          n.driver = base.starts_with("cu") && !base.starts_with("cuda");
          n.known = true;
        }
        c.name = n.id;
        driver = driver || n.driver;
      } else {
        c.name = writer_.intern("(unknown API)");
      }
      c.kind = driver ? ApiKind::kDriver : ApiKind::kRuntime;
      writer_.add_api_call(c);
      note_thread(p->rank, id.pid, id.tid);
      ++p->cpu_events;
      if (any_nccl && c.correlation != kNull) {
        if (const std::size_t* nccl = enclosing_nccl(gtid, start)) {
          p->nccl_launches[c.correlation] = *nccl;
        } else if (const std::size_t group = enclosing_group_end(gtid, start); group != kNoGroup) {
          p->group_launches[c.correlation] = {group, start};
        }
      }
    }
  }

  // [SECTION] GPU activities (kernels, graphs, memcpy, memset, sync)

  void note_activity(Process& p, const ActivityRecord& a) {
    const std::tuple<std::int32_t, std::int64_t, std::int64_t> stream{p.rank, a.device, a.stream};
    if (stream != last_stream_) {  // consecutive rows mostly share a stream: skip the set lookup
      streams_.insert(stream);
      devices_used_.insert({p.key, a.device});
      last_stream_ = stream;
    }
    ++p.gpu_events;
  }

  void note_thread(std::int32_t rank, std::int64_t pid, std::int64_t tid) {
    const std::tuple<std::int32_t, std::int64_t, std::int64_t> thread{rank, pid, tid};
    if (thread != last_thread_) {
      threads_.insert(thread);
      last_thread_ = thread;
    }
  }

  // The columns every CUPTI activity table starts with here (start, end, deviceId, streamId, correlationId,
  // globalPid, in that order in the SELECT): fills A and returns its process, or counts an orphan and returns
  // null.
  Process* gpu_activity(sql::Statement& s, ActivityKind kind, ActivityRecord& a) {
    Process* p = process(s.column_int(5));
    if (!p) {
      ++orphans_;
      return nullptr;
    }
    a.rank = p->rank;
    a.kind = kind;
    a.start_ns = profile_time(*p, s.column_int(0));
    a.end_ns = profile_end(*p, a.start_ns, s.column_int(1));
    const std::int64_t device = s.column_int_or(2, 0);
    if (device < INT32_MIN || device > INT32_MAX) bad_row(fmt::format("deviceId {} is out of range", device));
    a.device = static_cast<std::int32_t>(device);
    a.stream = s.column_int_or(3, 0);
    a.correlation = s.column_int(4);
    return p;
  }

  void note_context(const Process& p, std::int64_t context, std::int32_t device) {
    if (context == kNull) return;
    const std::pair<std::int64_t, std::int64_t> key{p.key, context};
    if (key == last_context_) return;  // rows of one context come in runs
    last_context_ = key;
    context_device_.emplace(key, device);
  }

  void read_kernels() {
    if (!has("CUPTI_ACTIVITY_KIND_KERNEL")) return;
    PhaseTimer timer("nsys: kernels");
    sql::Statement s = db_.prepare(select("CUPTI_ACTIVITY_KIND_KERNEL", {"start",
                                                                         "end",
                                                                         "deviceId",
                                                                         "streamId",
                                                                         "correlationId",
                                                                         "globalPid",
                                                                         "demangledName",
                                                                         "shortName",
                                                                         "registersPerThread",
                                                                         "gridX",
                                                                         "gridY",
                                                                         "gridZ",
                                                                         "blockX",
                                                                         "blockY",
                                                                         "blockZ",
                                                                         "staticSharedMemory",
                                                                         "dynamicSharedMemory",
                                                                         "graphNodeId",
                                                                         "graphId",
                                                                         "contextId"}));
    // Per kernel name: what its NCCL name says (parsed once; no op for generic kernels).
    std::unordered_map<std::int64_t, std::optional<import::NcclKernelName>> nccl_names;
    while (next(s, "CUPTI_ACTIVITY_KIND_KERNEL")) {
      ActivityRecord a;
      Process* p = gpu_activity(s, ActivityKind::kKernel, a);
      if (!p) continue;
      std::int64_t name_id = s.column_int(6);
      if (string_of(name_id).empty()) name_id = s.column_int(7);
      a.name = intern_id(name_id);
      if (a.name == kNoString) a.name = writer_.intern("(unnamed kernel)");
      a.registers = s.column_int(8);
      for (int i = 0; i < 3; ++i) {
        a.grid[i] = s.column_int(9 + i);
        a.block[i] = s.column_int(12 + i);
      }
      const std::int64_t static_shared = s.column_int(15), dynamic_shared = s.column_int(16);
      if (static_shared != kNull || dynamic_shared != kNull) {
        a.shared_bytes =
            (static_shared == kNull ? 0 : static_shared) + (dynamic_shared == kNull ? 0 : dynamic_shared);
      }
      a.graph_id = s.column_int(18);
      if (a.graph_id == kNull && !s.column_is_null(17)) ++graph_kernels_without_id_;
      note_context(*p, s.column_int(19), a.device);
      const std::int64_t activity = writer_.add_activity(a);
      note_activity(*p, a);
      auto parsed_it = nccl_names.find(name_id);
      if (parsed_it == nccl_names.end()) {
        parsed_it = nccl_names.emplace(name_id, import::parse_nccl_kernel_name(string_of(name_id))).first;
      }
      const std::size_t* own = launching_range(*p, a.correlation);
      if (!parsed_it->second) continue;
      const auto& parsed = *parsed_it->second;
      if (own) {  // the NVTX range's metadata will attach to this kernel
        auto& record = nccl_[*own].record;
        if (record.algorithm == kNoString) record.algorithm = writer_.intern(parsed.algorithm);
        if (record.protocol == kNoString) record.protocol = writer_.intern(parsed.protocol);
        continue;
      }
      auto group = a.correlation == kNull ? p->group_launches.end() : p->group_launches.find(a.correlation);
      if (group != p->group_launches.end()) {  // waits for the group's collectives (resolve_nccl_groups)
        nccl_groups_[group->second.first].kernels.push_back(
            {p->rank, activity, a.start_ns, a.end_ns, group->second.second, a.correlation, parsed});
        continue;
      }
      add_kernel_name_collective(p->rank, activity, a.start_ns, a.end_ns, parsed);
    }
  }

  // The NCCL collective range that launched CORRELATION itself (marking it so), or nullptr.
  const std::size_t* launching_range(Process& p, std::int64_t correlation) {
    if (correlation == kNull) return nullptr;
    auto launch = p.nccl_launches.find(correlation);
    if (launch == p.nccl_launches.end()) return nullptr;
    nccl_[launch->second].launched = true;
    return &launch->second;
  }

  // A collective known from the NCCL kernel's name only (no NVTX range describes it).
  void add_kernel_name_collective(std::int32_t rank, std::int64_t activity, TimeNs start_ns, TimeNs end_ns,
                                  const import::NcclKernelName& name) {
    if (name.op.empty()) return;  // a generic kernel: nothing says what it ran
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = activity;
    c.op = writer_.intern(name.op);
    c.algorithm = writer_.intern(name.algorithm);
    c.protocol = writer_.intern(name.protocol);
    c.start_ns = start_ns;
    c.end_ns = end_ns;
    c.source = vocabulary::kNameOnlySource;
    writer_.add_collective(c);
  }

  // Collectives issued inside ncclGroupStart..ncclGroupEnd launched nothing themselves: the group's
  // ncclGroupEnd launched their kernels. Each such collective is written on the kernel assign_group gives it,
  // with the kernel's GPU times, algorithm and protocol; kernels no collective of the group claims keep a
  // collective from their name. Collectives of a group that launched no kernel keep their CPU times.
  void resolve_nccl_groups() {
    for (auto& group : nccl_groups_) {
      if (group.kernels.empty()) continue;
      std::stable_sort(group.kernels.begin(), group.kernels.end(),
                       [](const GroupKernel& a, const GroupKernel& b) {
                         return std::tie(a.call_start, a.correlation, a.start_ns, a.activity) <
                                std::tie(b.call_start, b.correlation, b.start_ns, b.activity);
                       });
      std::vector<std::size_t> members;
      std::vector<std::string_view> ops;
      for (const auto index : group.collectives) {
        if (nccl_[index].launched) {  // it launched its own kernel: attached at commit as usual
          if (group.start_missing) {  // so the group began after it
            members.clear();
            ops.clear();
          }
          continue;
        }
        members.push_back(index);
        ops.push_back(nccl_[index].op);
      }
      const auto to = assign_group(ops, group.kernels);
      std::vector<bool> claimed(group.kernels.size(), false);
      for (std::size_t i = 0; i < members.size(); ++i) {
        auto& c = nccl_[members[i]];
        const auto& k = group.kernels[to[i]];
        CollectiveRecord record = c.record;
        record.activity_id = k.activity;
        record.start_ns = k.start_ns;
        record.end_ns = k.end_ns;
        record.algorithm = writer_.intern(k.name.algorithm);
        record.protocol = writer_.intern(k.name.protocol);
        writer_.add_collective(record);
        c.attached = true;
        claimed[to[i]] = true;
      }
      for (std::size_t k = 0; k < group.kernels.size(); ++k) {
        if (claimed[k]) continue;
        const auto& kernel = group.kernels[k];
        add_kernel_name_collective(kernel.rank, kernel.activity, kernel.start_ns, kernel.end_ns, kernel.name);
      }
    }
  }

  // Whole-graph records (--cuda-graph-trace=graph): one activity per graph launch.
  void read_graph_traces() {
    if (!has("CUPTI_ACTIVITY_KIND_GRAPH_TRACE")) return;
    sql::Statement s = db_.prepare(select(
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
        {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "graphId", "graphExecId"}));
    std::unordered_map<std::int64_t, StringId> names;
    while (next(s, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")) {
      ActivityRecord a;
      Process* p = gpu_activity(s, ActivityKind::kKernel, a);
      if (!p) continue;
      a.graph_id = s.column_int(6);
      launching_range(*p, a.correlation);
      auto& name = names[a.graph_id];
      if (name == kNoString) {
        name = writer_.intern(a.graph_id == kNull ? std::string("CUDA graph")
                                                  : fmt::format("CUDA graph {}", a.graph_id));
      }
      a.name = name;
      writer_.add_activity(a);
      note_activity(*p, a);
    }
  }

  void read_memcpy() {
    if (!has("CUPTI_ACTIVITY_KIND_MEMCPY")) return;
    PhaseTimer timer("nsys: memcpy");
    sql::Statement s =
        db_.prepare(select("CUPTI_ACTIVITY_KIND_MEMCPY",
                           {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
                            "copyKind", "srcKind", "dstKind", "graphNodeId", "contextId"}));
    std::map<std::array<std::int64_t, 3>, std::pair<StringId, StringId>> names;  // -> (name, copy kind)
    while (next(s, "CUPTI_ACTIVITY_KIND_MEMCPY")) {
      ActivityRecord a;
      Process* p = gpu_activity(s, ActivityKind::kMemcpy, a);
      if (!p) continue;
      a.bytes = s.column_int(6);
      note_context(*p, s.column_int(11), a.device);
      const std::array<std::int64_t, 3> key = {s.column_int_or(7, 0), s.column_int_or(8, -1),
                                               s.column_int_or(9, -1)};
      auto& name = names[key];
      if (name.first == kNoString) {
        const std::string_view kind = copy_kind_name(key[0]);
        name.first = key[1] < 0 || key[2] < 0
                         ? writer_.intern(fmt::format("Memcpy {}", kind))
                         : writer_.intern(fmt::format("Memcpy {} ({} -> {})", kind, memory_kind_name(key[1]),
                                                      memory_kind_name(key[2])));
        name.second = writer_.intern(kind);
      }
      a.name = name.first;
      a.copy_kind = name.second;
      writer_.add_activity(a);
      note_activity(*p, a);
    }
  }

  void read_memset() {
    if (!has("CUPTI_ACTIVITY_KIND_MEMSET")) return;
    sql::Statement s =
        db_.prepare(select("CUPTI_ACTIVITY_KIND_MEMSET", {"start", "end", "deviceId", "streamId",
                                                          "correlationId", "globalPid", "bytes", "memKind"}));
    std::map<std::int64_t, StringId> names;
    while (next(s, "CUPTI_ACTIVITY_KIND_MEMSET")) {
      ActivityRecord a;
      Process* p = gpu_activity(s, ActivityKind::kMemset, a);
      if (!p) continue;
      a.bytes = s.column_int(6);
      const std::int64_t kind = s.column_int_or(7, 2);
      auto& name = names[kind];
      if (name == kNoString) name = writer_.intern(fmt::format("Memset ({})", memory_kind_name(kind)));
      a.name = name;
      writer_.add_activity(a);
      note_activity(*p, a);
    }
  }

  void read_syncs() {
    if (!has("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")) return;
    sql::Statement s = db_.prepare(select(
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "syncType", "contextId"}));
    std::map<std::int64_t, StringId> names;
    while (next(s, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")) {
      ActivityRecord a;
      Process* p = gpu_activity(s, ActivityKind::kSync, a);
      if (!p) continue;
      // A synchronisation's deviceId is not always its device (0 for a context on device 1 in Nsight Systems
      // 2024-2026 exports): its context, which kernels and copies ran in, says which.
      if (const auto it = context_device_.find({p->key, s.column_int(7)}); it != context_device_.end())
        a.device = it->second;
      const std::int64_t type = s.column_int_or(6, 0);
      auto& name = names[type];
      if (name == kNoString) name = writer_.intern(sync_name(type));
      a.name = name;
      // Context and event synchronisations wait for the whole device: CUPTI gives them no stream
      // (CUPTI_SYNCHRONIZATION_INVALID_VALUE, 4294967295 in the export). They are stored as device events.
      if (s.column_is_null(3) || a.stream < 0 || vocabulary::is_device_wide_stream(a.stream)) {
        a.stream = vocabulary::kDeviceWideStream;
      }
      writer_.add_activity(a);
      note_activity(*p, a);
    }
  }

  // [SECTION] the CPU side: OS runtime calls, thread scheduling, CPU samples

  // A thread of a rank's process, or null (counted) for a row of another process: Nsight records every
  // process it saw on the machine, meshscope keeps those of the ranks.
  Process* os_process(std::int64_t gtid) {
    Process* p = process(gtid);
    if (!p) ++other_process_os_rows_;
    return p;
  }

  std::int32_t cpu_number(std::int64_t cpu) {
    if (cpu == kNull) return -1;
    if (cpu < 0 || cpu > INT32_MAX) bad_row(fmt::format("cpu {} is out of range", cpu));
    return static_cast<std::int32_t>(cpu);
  }

  // OSRT_API: each call as an os_runtime range on its thread (nested with the thread's NVTX ranges).
  void read_os_runtime() {
    if (!has("OSRT_API")) return;
    PhaseTimer timer("nsys: OS runtime");
    sql::Statement s = db_.prepare(select("OSRT_API", {"start", "end", "globalTid", "nameId"}));
    const StringId category = writer_.intern("OS runtime");
    while (next(s, "OSRT_API")) {
      const std::int64_t gtid = s.column_int(2);
      Process* p = os_process(gtid);
      if (!p) continue;
      const GlobalId id = decode_global_id(gtid);
      RangeRecord r;
      r.rank = p->rank;
      r.kind = RangeKind::kOsRuntime;
      r.pid = id.pid;
      r.tid = id.tid;
      r.start_ns = profile_time(*p, s.column_int(0));
      r.end_ns = profile_end(*p, r.start_ns, s.column_int(1));
      r.name = intern_id(s.column_int(3));
      if (r.name == kNoString) r.name = writer_.intern("(unnamed)");
      r.category = category;
      writer_.add_range(r);
      note_thread(p->rank, id.pid, id.tid);
      ++p->cpu_events;
      ++os_runtime_calls_;
    }
  }

  // SCHED_EVENTS: each thread's switches onto and off a core, paired into the intervals it ran. A thread
  // already running when the capture began runs from the capture's start (export time 0, or its first event
  // when earlier); one still running at the end runs until the last switch the export recorded.
  void read_scheduling() {
    if (!has("SCHED_EVENTS")) return;
    PhaseTimer timer("nsys: scheduling");
    // Off before on at one time: a thread switched straight back runs on.
    sql::Statement s =
        db_.prepare(select("SCHED_EVENTS", {"start", "cpu", "isSchedIn", "globalTid"},
                           "WHERE globalTid IS NOT NULL ORDER BY globalTid, start, isSchedIn"));
    struct Open {
      std::int64_t gtid = kNull, start = kNull;
      std::int32_t cpu = -1;
    };
    Open open;
    std::int64_t last_time = 0;
    std::vector<Open> running_at_end;
    auto emit = [&](const Open& o, std::int64_t end) {
      Process* p = process(o.gtid);
      const GlobalId id = decode_global_id(o.gtid);
      ThreadActivityRecord a;
      a.rank = p->rank;
      a.kind = ThreadActivityKind::kOnCpu;
      a.pid = id.pid;
      a.tid = id.tid;
      a.start_ns = profile_time(*p, o.start);
      a.end_ns = profile_end(*p, a.start_ns, end);
      a.cpu = o.cpu;
      writer_.add_thread_activity(a);
      note_thread(p->rank, id.pid, id.tid);
      ++on_cpu_intervals_;
    };
    std::int64_t thread = kNull;
    bool seen_switch = false;
    while (next(s, "SCHED_EVENTS")) {
      const std::int64_t time = s.column_int(0);
      if (time == kNull) bad_row("a start time is missing (NULL)");
      last_time = std::max(last_time, time);
      const std::int64_t gtid = s.column_int(3);
      if (gtid != thread) {
        if (open.start != kNull) running_at_end.push_back(open);
        open = {};
        thread = gtid;
        seen_switch = false;
      }
      if (!os_process(gtid)) continue;
      const std::int32_t cpu = cpu_number(s.column_int(1));
      if (s.column_int_or(2, 0) != 0) {
        if (open.start != kNull) emit(open, time);  // two switches on: the first run ended unseen
        open = {gtid, time, cpu};
      } else if (open.start != kNull) {
        emit(open, time);
        open = {};
      } else if (!seen_switch) {
        emit({gtid, std::min<std::int64_t>(0, time), cpu}, time);
      }
      seen_switch = true;
    }
    if (open.start != kNull) running_at_end.push_back(open);
    for (const Open& o : running_at_end) emit(o, std::max(last_time, o.start));
  }

  static constexpr std::size_t kMaxFrames = 256;

  // COMPOSITE_EVENTS with their SAMPLING_CALLCHAINS: each sample with its call stack as one text ("function
  // (module)" per line, innermost first), walked together in id order.
  void read_cpu_samples() {
    if (!has("COMPOSITE_EVENTS")) return;
    PhaseTimer timer("nsys: CPU samples");
    sql::Statement samples =
        db_.prepare(select("COMPOSITE_EVENTS", {"id", "start", "cpu", "globalTid"}, "ORDER BY id"));
    const bool chains = has("SAMPLING_CALLCHAINS");
    sql::Statement frames;
    if (chains) {
      frames = db_.prepare(
          select("SAMPLING_CALLCHAINS", {"id", "symbol", "module", "stackDepth"}, "ORDER BY id, stackDepth"));
    }
    bool frame_ready = chains && frames.step();
    std::string stack;
    while (next(samples, "COMPOSITE_EVENTS")) {
      const std::int64_t sample_id = samples.column_int(0);
      stack.clear();
      while (frame_ready && frames.column_int(0) < sample_id) frame_ready = frames.step();
      std::size_t depth = 0;
      while (frame_ready && frames.column_int(0) == sample_id) {
        // A real stack is tens of frames; past kMaxFrames (a damaged or hostile export) the rest is counted.
        if (++depth > kMaxFrames) {
          frame_ready = frames.step();
          continue;
        }
        std::string_view module = string_of(frames.column_int(2));
        if (const auto slash = module.rfind('/'); slash != std::string_view::npos)
          module.remove_prefix(slash + 1);
        const std::string& symbol = string_of(frames.column_int(1));
        if (!stack.empty()) stack += '\n';
        stack += symbol.empty() ? std::string("(unknown)") : symbol;
        if (!module.empty()) fmt::format_to(std::back_inserter(stack), " ({})", module);
        frame_ready = frames.step();
      }
      if (depth > kMaxFrames)
        fmt::format_to(std::back_inserter(stack), "\n({} more frames)", depth - kMaxFrames);
      const std::int64_t gtid = samples.column_int(3);
      Process* p = os_process(gtid);
      if (!p) continue;
      const GlobalId id = decode_global_id(gtid);
      ThreadActivityRecord a;
      a.rank = p->rank;
      a.kind = ThreadActivityKind::kSample;
      a.pid = id.pid;
      a.tid = id.tid;
      a.start_ns = a.end_ns = profile_time(*p, samples.column_int(1));
      a.cpu = cpu_number(samples.column_int(2));
      a.stack = writer_.intern(stack);
      writer_.add_thread_activity(a);
      note_thread(p->rank, id.pid, id.tid);
      ++cpu_samples_;
    }
  }

  // [SECTION] devices, streams, threads, rank facts

  void write_devices() {
    if (!has("TARGET_INFO_GPU")) return;
    std::set<std::pair<std::int64_t, std::int64_t>> wanted = devices_used_;  // (process key, device)
    if (has("TARGET_INFO_CUDA_DEVICE")) {  // devices a process opened, even if it ran nothing on them
      sql::Statement s = db_.prepare(select("TARGET_INFO_CUDA_DEVICE", {"pid", "gpuId"}));
      while (s.step()) {
        if (s.column_is_null(0) || s.column_is_null(1)) continue;
        for (const auto& [key, p] : processes_) {
          if (p.pid == s.column_int(0)) wanted.insert({key, s.column_int(1)});
        }
      }
    }
    sql::Statement s =
        db_.prepare(select("TARGET_INFO_GPU", {"vmId", "id", "name", "totalMemory", "computeMajor",
                                               "computeMinor", "smCount", "busLocation", "uuid", "chipName",
                                               "clockRate", "memoryBandwidth", "l2CacheSize", "cuDevice"}));
    std::set<std::pair<std::int32_t, std::int32_t>> written;
    while (s.step()) {
      const std::int64_t vm =
          s.column_is_null(0) ? kNull
                              : static_cast<std::int64_t>(static_cast<std::uint64_t>(s.column_int(0)) >> 48);
      const std::int64_t device = s.column_int(1);
      DeviceInfo d;
      d.device = static_cast<std::int32_t>(device);
      d.name = s.column_text(2);
      d.total_memory_bytes = s.column_int(3);
      d.compute_major = s.column_int(4);
      d.compute_minor = s.column_int(5);
      d.sm_count = s.column_int(6);
      JsonWriter props;
      props.begin_object();
      static constexpr const char* kNames[] = {
          "vmId",        "id",   "name",     "totalMemory", "computeMajor",    "computeMinor", "smCount",
          "busLocation", "uuid", "chipName", "clockRate",   "memoryBandwidth", "l2CacheSize",  "cuDevice"};
      for (int column = 1; column < 14; ++column) {
        if (s.column_is_null(column)) continue;
        props.key(kNames[column]);
        if (sqlite3_column_type(s.handle(), column) == SQLITE_TEXT) {
          props.value(s.column_text(column));
        } else {
          props.value(s.column_int(column));
        }
      }
      props.end_object();
      d.properties_json = props.str();
      for (const auto& [key, used] : wanted) {
        if (used != device) continue;
        if (vm != kNull && (key >> 24) != vm) continue;  // the same id on another node
        const auto& p = processes_.at(key);
        if (!written.insert({p.rank, d.device}).second) continue;
        d.rank = p.rank;
        writer_.add_device(d);
      }
    }
  }

  void write_streams_and_threads() {
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::string>
        stream_names;  // (pid, dev, stream)
    if (has("TARGET_INFO_NVTX_CUDA_STREAM")) {
      sql::Statement s =
          db_.prepare(select("TARGET_INFO_NVTX_CUDA_STREAM", {"processId", "deviceId", "streamId", "name"}));
      while (s.step()) stream_names[{s.column_int(0), s.column_int(1), s.column_int(2)}] = s.column_text(3);
    }
    std::map<std::int32_t, std::int64_t> pid_of_rank;
    for (const auto& [key, p] : processes_) pid_of_rank[p.rank] = p.pid;
    for (const auto& [rank, device, stream] : streams_) {
      StreamInfo info;
      info.rank = rank;
      info.device = static_cast<std::int32_t>(device);
      info.stream = stream;
      auto it = stream_names.find({pid_of_rank[rank], device, stream});
      info.name = it != stream_names.end()                    ? it->second
                  : vocabulary::is_device_wide_stream(stream) ? std::string("device-wide syncs")
                                                              : fmt::format("stream {}", stream);
      writer_.add_stream(info);
    }
    std::map<std::pair<std::int64_t, std::int64_t>, const std::string*> names;  // (pid, tid)
    for (const auto& [gtid, name] : thread_names_) {
      const GlobalId id = decode_global_id(gtid);
      names[{id.pid, id.tid}] = &name;
    }
    for (const auto& [rank, pid, tid] : threads_) {
      ThreadInfo info;
      info.rank = rank;
      info.pid = pid;
      info.tid = tid;
      auto it = names.find({pid, tid});
      if (it != names.end()) info.name = *it->second;
      writer_.add_thread(info);
    }
  }

  std::vector<ImportedRank> write_ranks() {
    std::vector<ImportedRank> result;
    const std::string file = path_.filename().string();
    bool first = true;
    for (auto& [key, p] : processes_) {
      RankInfo info;
      info.rank = p.rank;
      info.pid = p.pid;
      info.source_file = source_file_;
      info.rank_source = rank_sources_[key];
      auto host = host_names_.find(key >> 24);
      if (host == host_names_.end()) host = host_names_.find(0);
      if (host == host_names_.end() && host_names_.size() == 1) host = host_names_.begin();
      if (host != host_names_.end()) info.hostname = host->second;
      if (p.uses_nccl) info.backend = "nccl";
      info.clock_base_ns = base_ns_;
      writer_.set_rank(info);
      result.push_back({p.rank, info.source_file, info.rank_source, p.gpu_events, p.cpu_events});
      const std::string process =
          fmt::format("{} pid {}{}", file, p.pid, p.name.empty() ? "" : " (" + p.name + ")");
      writer_.add_diagnostic(
          p.rank, "info",
          fmt::format(
              "{}: Nsight Systems export schema {}{}; rank from {}{}", process,
              schema_version_.empty() ? "(unstated)" : schema_version_,
              product_version_.empty() ? "" : " (Nsight Systems " + product_version_ + ")",
              info.rank_source == "mpi"        ? "its MPI rank"
              : info.rank_source == "filename" ? "the file name"
                                               : "the process order in the export",
              has_base_ ? "" : "; no session start time, so times stay relative to the capture start"));
      if (p.negative_times > 0) {
        writer_.add_diagnostic(
            p.rank, "warning",
            fmt::format("{}: {} event times lie before the capture session start (negative in "
                        "the export); kept as they are",
                        process, p.negative_times));
      }
      if (p.backwards_times > 0) {
        writer_.add_diagnostic(
            p.rank, "warning",
            fmt::format("{}: {} events ended before they started in the export; kept with zero length",
                        process, p.backwards_times));
      }
      if (p.gpu_events == 0) {
        writer_.add_diagnostic(p.rank, "warning",
                               fmt::format("{}: no GPU activity; imported its CPU events only", process));
      }
      if (first) {  // facts about the whole file, once
        first = false;
        if (!version_warning_.empty()) writer_.add_diagnostic(p.rank, "warning", version_warning_);
        if (unended_ranges_ > 0) {
          writer_.add_diagnostic(p.rank, "warning",
                                 fmt::format("{}: {} NVTX ranges never ended; kept as zero-length ranges",
                                             file, unended_ranges_));
        }
        if (orphans_ > 0) {
          writer_.add_diagnostic(
              p.rank, "warning",
              fmt::format("{}: {} events without a process id were not imported", file, orphans_));
        }
        if (os_runtime_calls_ + on_cpu_intervals_ + cpu_samples_ + other_process_os_rows_ > 0) {
          writer_.add_diagnostic(
              p.rank, "info",
              fmt::format("{}: the CPU side: {} OS runtime calls, {} intervals threads ran on a core, {} CPU "
                          "samples; {} rows of processes that are not ranks left out",
                          file, os_runtime_calls_, on_cpu_intervals_, cpu_samples_, other_process_os_rows_));
        }
        if (skipped_nvtx_ > 0) {
          writer_.add_diagnostic(
              p.rank, "info",
              fmt::format("{}: {} NVTX events of other types (counters, resource names) not stored", file,
                          skipped_nvtx_));
        }
        if (skipped_api_records_ > 0) {
          writer_.add_diagnostic(p.rank, "info",
                                 fmt::format("{}: {} CUDA API records of other event classes (call-stack "
                                             "backtraces of calls already imported) not stored",
                                             file, skipped_api_records_));
        }
        if (graph_kernels_without_id_ > 0) {
          writer_.add_diagnostic(
              p.rank, "info",
              fmt::format(
                  "{}: {} kernels ran from CUDA graphs, but this export schema gives no graph id for them",
                  file, graph_kernels_without_id_));
        }
      }
    }
    std::sort(result.begin(), result.end(),
              [](const ImportedRank& a, const ImportedRank& b) { return a.rank < b.rank; });
    return result;
  }

  std::vector<ImportedRank> run_import() {
    PhaseTimer timer("nsys: import");
    read_tables();
    check_export();
    read_strings();
    read_session_start();
    read_host_names();
    read_threads_and_mpi();
    find_processes();
    read_nvtx();
    read_api_calls();
    read_kernels();
    read_graph_traces();
    read_memcpy();
    read_memset();
    read_syncs();
    read_os_runtime();
    read_scheduling();
    read_cpu_samples();
    resolve_nccl_groups();
    for (const auto& c : nccl_) {
      if (!c.attached) writer_.add_cpu_collective(c.record, c.pid, c.tid);
    }
    write_devices();
    write_streams_and_threads();
    return write_ranks();
  }

  const std::filesystem::path& path_;
  ProfileWriter& writer_;
  const RankClaim& claim_;
  sql::Database db_;
  std::set<std::string> tables_, other_objects_;  // upper-case names
  const char* table_ = nullptr;                   // the table being read, and the row, for messages
  std::uint64_t row_ = 0;
  std::vector<std::string>* notes_;
  std::string schema_version_, product_version_, version_warning_, source_file_;
  std::vector<std::string> strings_;
  std::vector<StringId> interned_;
  std::int64_t base_ns_ = 0;
  bool has_base_ = false;
  std::map<std::int64_t, std::string> host_names_;                        // (hw, vm) -> host name
  std::map<std::int64_t, std::string> thread_names_;                      // globalTid -> name
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> domains_;  // (process key, domainId) -> name
  std::map<std::int64_t, std::int64_t> mpi_ranks_;                        // process key -> MPI rank
  std::map<std::int64_t, Process> processes_;                             // process key -> process
  std::map<std::int64_t, std::string> rank_sources_;                      // process key -> rank source
  Process* last_process_ = nullptr;
  std::vector<NcclCollective> nccl_;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> nccl_by_thread_;
  std::vector<NcclGroup> nccl_groups_;
  std::unordered_map<std::int64_t, std::vector<GroupEndRange>> group_ends_by_thread_;  // in start order
  std::set<std::tuple<std::int32_t, std::int64_t, std::int64_t>> streams_, threads_;
  std::set<std::pair<std::int64_t, std::int64_t>> devices_used_;
  // (process key, contextId) -> the device its kernels and copies ran on.
  std::map<std::pair<std::int64_t, std::int64_t>, std::int32_t> context_device_;
  std::pair<std::int64_t, std::int64_t> last_context_{-1, -1};
  std::tuple<std::int32_t, std::int64_t, std::int64_t> last_stream_{-1, -1, -1}, last_thread_{-1, -1, -1};
  std::uint64_t nvtx_events_ = 0, skipped_nvtx_ = 0, unended_ranges_ = 0, orphans_ = 0,
                graph_kernels_without_id_ = 0, skipped_api_records_ = 0;
  std::uint64_t os_runtime_calls_ = 0, on_cpu_intervals_ = 0, cpu_samples_ = 0, other_process_os_rows_ = 0;
};

}  // namespace

bool is_nsys_export(const std::filesystem::path& path) {
  if (!import::is_sqlite_file(path)) return false;
  try {
    sql::Database db(path, true);
    return db.has_table("META_DATA_EXPORT") || db.has_table("EXPORT_META_DATA") ||
           (db.has_table("StringIds") &&
            (db.has_table("CUPTI_ACTIVITY_KIND_KERNEL") || db.has_table("NVTX_EVENTS") ||
             db.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")));
  } catch (const Error&) {
    return false;
  }
}

std::vector<ImportedRank> import_file(const std::filesystem::path& path, ProfileWriter& writer,
                                      const RankClaim& claim, std::vector<std::string>* notes) {
  Importer importer(path, writer, claim, notes);
  return importer.run();
}

}  // namespace meshscope::nsys
