-- meshscope profile schema. This file is the one place the schema is written: the writer executes it verbatim, the
-- C++ description of every table (profiler/schema_declared.hpp, generated at build time by schema_codegen.cpp)
-- comes from it, and the documentation points here. Open a profile read-only with `sqlite3 -readonly PROFILE.msdb`.
--
-- Conventions
--   * Every time is an int64 count of nanoseconds on one clock shared by all ranks of the job (the "profile
--     clock"). For imported traces it is the source's own clock (Kineto: ts + baseTimeNanoseconds) plus the
--     rank's clock_offset_ns (0 unless a merge aligned the rank).
--   * Every name is an id into `strings`. Join `strings` to read it.
--   * `rank` is the global rank of the process that recorded the row (0-based).
--   * Nothing is dropped: overlapping events on one stream or thread are stored as they are.
--   * Kind columns hold small integers; their meaning is listed next to each column and in the `enums` table.
--
-- Tags read by the generator
--   * `-- @role ROLE` before each table says whose rows it holds and so what happens to them: job (facts of the
--     whole profile), description (what each rank is), events (what each rank did: a summary part drops them, a
--     rank renumbered or shifted in time moves them), summary (the measured analysis per rank).
--   * `[optional]` opening a column's comment: profiles written before the column existed lack it; they load,
--     reading NULL. (Profile::load requires no column that may be NULL; the summaries' reader, stricter, reads
--     one missing as NULL only when it is tagged.)
--   * `[clock]` opening a column's comment: a time on the profile clock, shifted with its rank's clock.
--   A tag applies to every column its line defines.

-- Key/value facts about the whole profile.
-- @role job
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,  -- schema_version, creator, creator_version, source_format, created_unix_s, job_id;
                           -- stated_model, stated_hardware (TOML), stated_layout: what the user stated the job ran
  value TEXT NOT NULL      -- the value, as text
);

-- Names of every enumerated value used in kind columns, so SQL users can join instead of memorising integers.
-- @role job
CREATE TABLE enums (
  enum_name  TEXT NOT NULL,     -- which column family: activity_kind, range_kind, api_kind
  value      INTEGER NOT NULL,  -- the integer stored in the data tables
  name       TEXT NOT NULL,     -- its meaning (kernel, memcpy, ...)
  PRIMARY KEY (enum_name, value)
);

-- Interned strings: kernel names, op names, stream names, collective metadata values.
-- @role job
CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,  -- the id other tables store
  value TEXT NOT NULL         -- the string itself
);

-- One row per rank (process) of the job.
-- @role description
CREATE TABLE ranks (
  rank            INTEGER PRIMARY KEY,  -- global rank
  world_size      INTEGER,              -- world size the rank reported (NULL when unknown)
  hostname        TEXT,                 -- host the rank ran on, when known
  pid             INTEGER,              -- main process id, when known
  source_file     TEXT NOT NULL,        -- [optional] the file this rank was imported or recorded from
  rank_source     TEXT NOT NULL,        -- [optional] where the rank number came from: distributedInfo, filename, single, recorded, ...
  backend         TEXT,                 -- distributed backend (nccl, gloo, ...), when known
  comm_version    TEXT,                 -- communication library version (e.g. NCCL 2.17.1), when known
  clock_base_ns   INTEGER NOT NULL DEFAULT 0,  -- [optional] base the source added to its own timestamps (Kineto baseTimeNanoseconds)
  clock_offset_ns INTEGER NOT NULL DEFAULT 0,  -- [optional] offset applied to align this rank to the profile clock
  first_ns        INTEGER,              -- [clock] earliest start of any event of this rank (profile clock)
  last_ns         INTEGER               -- [clock] latest end of any event of this rank (profile clock)
);

-- GPUs visible to each rank (from Kineto deviceProperties, Nsight TARGET_INFO_GPU, or CUPTI).
-- @role description
CREATE TABLE devices (
  rank              INTEGER NOT NULL,  -- rank that reported the device
  device            INTEGER NOT NULL,  -- device ordinal as the rank saw it
  name              TEXT,              -- product name (NVIDIA H100 80GB HBM3, AMD Instinct MI300X, ...)
  total_memory_bytes INTEGER,          -- global memory in bytes
  compute_major     INTEGER,           -- compute capability major (or gfx major for AMD)
  compute_minor     INTEGER,           -- compute capability minor
  sm_count          INTEGER,           -- streaming multiprocessors / compute units
  properties_json   TEXT,              -- every property the source gave, as a JSON object
  PRIMARY KEY (rank, device)
);

-- Process groups (communicators) each rank belonged to (Kineto distributedInfo.pg_config, NCCL plugin comms).
-- @role description
CREATE TABLE process_groups (
  rank        INTEGER NOT NULL,  -- rank that reported the group
  pg_name     TEXT NOT NULL,     -- process group name / communicator id (joins collectives.communicator)
  pg_desc     TEXT,              -- description (default_pg, tp, dp, ...)
  backend     TEXT,              -- backend configuration (cuda:nccl, cpu:gloo, ...)
  group_size  INTEGER,           -- number of ranks in the group
  ranks_json  TEXT,              -- the member global ranks as a JSON array
  PRIMARY KEY (rank, pg_name)
);

-- GPU streams (Kineto: pid=device, tid=stream) with their display names.
-- @role description
CREATE TABLE streams (
  rank    INTEGER NOT NULL,  -- rank that owns the stream
  device  INTEGER NOT NULL,  -- device ordinal
  stream  INTEGER NOT NULL,  -- stream id as the source reported it
  name    TEXT,              -- display name ("stream 7"), when the source gave one
  PRIMARY KEY (rank, device, stream)
);

-- CPU threads (and other non-GPU tracks) with their names.
-- @role description
CREATE TABLE threads (
  rank  INTEGER NOT NULL,  -- rank that owns the thread
  pid   INTEGER NOT NULL,  -- process id
  tid   INTEGER NOT NULL,  -- thread id
  name  TEXT,              -- thread name, when known
  PRIMARY KEY (rank, pid, tid)
);

-- GPU activities: everything that occupies a GPU stream.
-- @role events
CREATE TABLE activities (
  id            INTEGER PRIMARY KEY,  -- unique within the profile
  rank          INTEGER NOT NULL,     -- owning rank
  kind          INTEGER NOT NULL,     -- 1 kernel, 2 memcpy, 3 memset, 4 sync (see enums.activity_kind)
  device        INTEGER NOT NULL,     -- device ordinal
  stream        INTEGER NOT NULL,     -- stream id (joins streams)
  start_ns      INTEGER NOT NULL,     -- [clock] start on the profile clock
  end_ns        INTEGER NOT NULL,     -- [clock] end on the profile clock (>= start_ns)
  name          INTEGER NOT NULL,     -- strings.id of the kernel / copy / sync name
  correlation   INTEGER,              -- CUPTI/roctracer correlation id linking to api_calls.correlation
  external_id   INTEGER,              -- profiler external id linking to the CPU op that launched it
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,     -- kernels: grid dimensions
  block_x INTEGER, block_y INTEGER, block_z INTEGER,  -- kernels: block dimensions
  registers     INTEGER,              -- kernels: registers per thread
  shared_bytes  INTEGER,              -- kernels: shared memory per block in bytes
  bytes         INTEGER,              -- memcpy/memset: bytes moved or set
  copy_kind     INTEGER,              -- memcpy: strings.id of the direction (HtoD, DtoH, DtoD, PtoP, ...)
  graph_id      INTEGER               -- CUDA graph id when the kernel was launched by a graph
);

-- Collective and point-to-point communication operations, one row per operation per rank.
-- @role events
CREATE TABLE collectives (
  id            INTEGER PRIMARY KEY,  -- unique within the profile
  rank          INTEGER NOT NULL,     -- rank that ran it
  activity_id   INTEGER,              -- activities.id of the kernel it ran as (NULL if none was seen)
  communicator  INTEGER,              -- strings.id of the communicator / process group name (joins process_groups.pg_name)
  pg_desc       INTEGER,              -- strings.id of the process group description
  pg_ranks      INTEGER,              -- strings.id of the member ranks as text ("[0, 1]")
  seq           INTEGER,              -- sequence number within the communicator (NULL when the source has none)
  op            INTEGER NOT NULL,     -- strings.id of the operation, normalised: allreduce, allgather, reducescatter, alltoall, broadcast, reduce, send, recv, sendrecv, barrier, ...
  in_nelems     INTEGER,              -- input element count
  out_nelems    INTEGER,              -- output element count
  dtype         INTEGER,              -- strings.id of the element type (Float, BFloat16, ...)
  in_bytes      INTEGER,              -- input message size in bytes
  out_bytes     INTEGER,              -- output message size in bytes
  group_size    INTEGER,              -- number of ranks taking part
  algorithm     INTEGER,              -- strings.id of the algorithm (RING, TREE, NVLS, ...), when known
  protocol      INTEGER,              -- strings.id of the protocol (LL, LL128, SIMPLE), when known
  channels      INTEGER,              -- channels used, when known
  start_ns      INTEGER NOT NULL,     -- [clock] GPU start of the operation on the profile clock
  end_ns        INTEGER NOT NULL,     -- [clock] GPU end of the operation on the profile clock
  source        TEXT NOT NULL         -- [optional] where the metadata came from: kernel_args, cpu_op, nccl_plugin, nvtx; nccl_plugin_enqueue: the plugin, timed only by the enqueue call (host time)
);

-- Host-side CUDA/HIP runtime and driver API calls.
-- @role events
CREATE TABLE api_calls (
  id           INTEGER PRIMARY KEY,  -- unique within the profile
  rank         INTEGER NOT NULL,     -- owning rank
  kind         INTEGER NOT NULL,     -- 1 runtime, 2 driver (see enums.api_kind)
  pid          INTEGER NOT NULL,     -- process id
  tid          INTEGER NOT NULL,     -- thread id
  start_ns     INTEGER NOT NULL,     -- [clock] call start
  end_ns       INTEGER NOT NULL,     -- [clock] call end
  name         INTEGER NOT NULL,     -- strings.id of the API name (cudaLaunchKernel, ...)
  correlation  INTEGER,              -- correlation id matching activities.correlation
  external_id  INTEGER,              -- profiler external id of the enclosing CPU op
  cbid         INTEGER               -- CUPTI callback id, when known
);

-- CPU-side ranges: operators, user annotations, Python functions, profiler steps, NVTX ranges, and annotations
-- that the profiler placed on GPU streams. Nesting is rebuilt per track by the writer.
-- @role events
CREATE TABLE ranges (
  id           INTEGER PRIMARY KEY,  -- unique within the profile
  rank         INTEGER NOT NULL,     -- owning rank
  kind         INTEGER NOT NULL,     -- 1 cpu_op, 2 annotation, 3 python_function, 4 step, 5 gpu_annotation, 6 nvtx, 7 other, 8 os_runtime (enums.range_kind)
  pid          INTEGER NOT NULL,     -- process id (for gpu_annotation: the device)
  tid          INTEGER NOT NULL,     -- thread id (for gpu_annotation: the stream)
  start_ns     INTEGER NOT NULL,     -- [clock] range start
  end_ns       INTEGER NOT NULL,     -- [clock] range end (= start_ns for a mark)
  name         INTEGER NOT NULL,     -- strings.id of the range name
  depth        INTEGER NOT NULL DEFAULT 0,  -- nesting depth on its track (0 = outermost)
  parent_id    INTEGER,              -- ranges.id of the enclosing range on the same track, NULL at depth 0
  external_id  INTEGER,              -- profiler external id (links ops to the kernels they launched)
  step         INTEGER,              -- for kind=step: the step number (ProfilerStep#N -> N)
  category     INTEGER,              -- strings.id of the source category (cpu_op, user_annotation, NVTX domain, ...)
  input_dims   INTEGER,              -- cpu_op: strings.id of its recorded "Input Dims" JSON, NULL when not recorded
  input_types  INTEGER               -- cpu_op: strings.id of its recorded "Input type" JSON, NULL when not recorded
);

-- Flow arrows the source recorded that are not implied by correlation ids (e.g. Kineto fwdbwd links).
-- CPU-to-GPU launch flows are implied by api_calls.correlation = activities.correlation and are not stored twice.
-- @role events
CREATE TABLE flows (
  id        INTEGER PRIMARY KEY,  -- unique within the profile
  rank      INTEGER NOT NULL,     -- owning rank
  category  INTEGER NOT NULL,     -- strings.id of the flow category (fwdbwd, ...)
  flow_id   INTEGER NOT NULL,     -- the source's flow id
  src_ns    INTEGER NOT NULL,     -- [clock] time of the flow start
  src_pid   INTEGER NOT NULL,     -- process of the flow start
  src_tid   INTEGER NOT NULL,     -- thread of the flow start
  dst_ns    INTEGER,              -- [clock] time of the flow end (NULL when the source had no end)
  dst_pid   INTEGER,              -- process of the flow end
  dst_tid   INTEGER               -- thread of the flow end
);

-- What the operating system recorded of each CPU thread (Nsight Systems' thread scheduling and CPU sampling):
-- the intervals the thread ran on a CPU core, and samples of the call stack it was in. Its calls into the OS
-- runtime libraries are ranges (kind 8, os_runtime).
-- @role events
CREATE TABLE thread_activity (
  id        INTEGER PRIMARY KEY,  -- unique within the profile
  rank      INTEGER NOT NULL,     -- owning rank
  kind      INTEGER NOT NULL,     -- 1 on_cpu (scheduled on core `cpu` from start_ns to end_ns), 2 sample (enums.thread_activity_kind)
  pid       INTEGER NOT NULL,     -- process id
  tid       INTEGER NOT NULL,     -- thread id
  start_ns  INTEGER NOT NULL,     -- [clock] start (a sample: its time)
  end_ns    INTEGER NOT NULL,     -- [clock] end (= start_ns for a sample)
  cpu       INTEGER,              -- the CPU core, when known
  stack     INTEGER               -- samples: strings.id of the call stack, innermost frame first, one frame per line
);

-- Warnings the importer or collector recorded (dropped events, clamped values, unknown fields).
-- @role description
CREATE TABLE diagnostics (
  rank     INTEGER,          -- rank concerned, NULL for the whole job
  severity TEXT NOT NULL,    -- [optional] info, warning
  message  TEXT NOT NULL     -- [optional] what happened
);

-- Work of CPU operators from their recorded shapes (docs/PROFILE.md "Work per operator"): one row per operator
-- recorded with shapes that has a work formula (analysis/measure/op_work.hpp).
-- @role events
CREATE TABLE op_work (
  id           INTEGER PRIMARY KEY,  -- unique within the profile (kernel_work.op_id points here)
  rank         INTEGER NOT NULL,     -- owning rank
  external_id  INTEGER,              -- the operator's external id (joins ranges on rank and external_id)
  pid          INTEGER NOT NULL,     -- process of the operator's thread
  tid          INTEGER NOT NULL,     -- its thread
  start_ns     INTEGER NOT NULL,     -- [clock] the operator's start (ranges.start_ns)
  name         INTEGER NOT NULL,     -- strings.id of the operator (aten::mm, ...)
  status       INTEGER NOT NULL,     -- 1 counted, 2 nested (inside a counted operator), 3 unparsable, 4 undetermined
  category     INTEGER,              -- 1 gemm, 2 attention, 3 conv, 4 norm, 5 elementwise, 6 other; NULL unless computed
  flops        REAL,                 -- floating-point operations (a multiply-add is 2); NULL unless computed
  bytes        REAL,                 -- compulsory bytes read and written; NULL unless computed
  input_dims   INTEGER,              -- strings.id of the recorded "Input Dims" JSON
  input_types  INTEGER,              -- strings.id of the recorded "Input type" JSON
  kernels      INTEGER NOT NULL DEFAULT 0,  -- GPU activities attributed to it (counted operators)
  kernel_ns    INTEGER NOT NULL DEFAULT 0   -- their summed duration
);

-- Each GPU activity (kernel, memcpy, memset) of a counted operator with its share of the operator's work, in
-- proportion to its duration (docs/PROFILE.md "Work per operator").
-- @role events
CREATE TABLE kernel_work (
  activity_id  INTEGER PRIMARY KEY,  -- activities.id
  rank         INTEGER NOT NULL,     -- owning rank
  op_id        INTEGER NOT NULL,     -- op_work.id of the operator that launched it
  flops        REAL NOT NULL,        -- [optional] its share of the operator's FLOPs
  bytes        REAL NOT NULL         -- [optional] its share of the operator's bytes
);

-- Summaries (docs/PROFILE.md "Summaries"; analysis/measure/summary.hpp): the measured analysis per rank, written
-- when the profile is created (import, record's merge, `meshscope summarize`) so that info, diff and the GUI's
-- rank x time overview read kilobytes instead of the events. They are present when meta holds
-- summaries = 1 (profiles written before them have empty tables; readers then analyse the events). Names are
-- stored as text here, not as strings ids: every row is an aggregate over many events. Times are ns as
-- everywhere; the breakdown columns (start_ns .. activities) are defined in docs/ANALYSIS.md.
-- @role summary
CREATE TABLE summary_ranks (
  rank                    INTEGER PRIMARY KEY,  -- global rank
  start_ns INTEGER, end_ns INTEGER, span_ns INTEGER, busy_ns INTEGER, idle_ns INTEGER,  -- the rank's GPU work
  compute_ns INTEGER, comm_ns INTEGER, memory_ns INTEGER, memory_only_ns INTEGER, sync_ns INTEGER,
  overlap_ns INTEGER, exposed_comm_ns INTEGER, activities INTEGER,
  outside_steps_span_ns   INTEGER,  -- span of the work launched outside every step (0 when none)
  outside_steps_busy_ns   INTEGER,  -- its busy time
  step_source             TEXT,     -- ProfilerStep, nvtx: <pattern>, or NULL when the rank has no steps
  unlinked_activities     INTEGER,  -- activities whose launch call is not in the profile
  collective_wait_ns      INTEGER,  -- time waiting for peers in matched collective instances
  collective_transfer_ns  INTEGER,  -- time transferring in them
  kernel_ns               INTEGER,  -- sum of the durations of all GPU activities
  training                INTEGER,  -- 1 backward operators recorded, 0 forward only, NULL no CPU operators
  n_kernel INTEGER, n_memcpy INTEGER, n_memset INTEGER, n_sync INTEGER,  -- event counts of the rank
  n_runtime INTEGER, n_driver INTEGER, n_cpu_op INTEGER, n_annotation INTEGER, n_python_function INTEGER,
  n_step INTEGER, n_gpu_annotation INTEGER, n_nvtx INTEGER, n_other INTEGER, n_collective INTEGER,
  n_flow INTEGER,
  overview_bucket_log2    INTEGER,  -- width of the overview buckets of this rank: 2^this ns
  overview_first_bucket   INTEGER,  -- index of its first bucket (starts at index * width on the profile clock)
  n_os_runtime INTEGER, n_on_cpu INTEGER, n_cpu_sample INTEGER  -- [optional] OS runtime calls, thread scheduling, CPU samples
);
-- One row per rank and step: the GPU work launched from inside the step's CPU range.
-- @role summary
CREATE TABLE summary_steps (
  rank INTEGER NOT NULL, ordinal INTEGER NOT NULL,  -- position of the step on the rank (by CPU start)
  step INTEGER NOT NULL,                            -- step number (ProfilerStep#N -> N)
  cpu_start_ns INTEGER, cpu_end_ns INTEGER,         -- [clock] the CPU range that defines the step
  start_ns INTEGER, end_ns INTEGER, span_ns INTEGER, busy_ns INTEGER, idle_ns INTEGER,
  compute_ns INTEGER, comm_ns INTEGER, memory_ns INTEGER, memory_only_ns INTEGER, sync_ns INTEGER,
  overlap_ns INTEGER, exposed_comm_ns INTEGER, activities INTEGER,
  PRIMARY KEY (rank, ordinal)
);
-- One row per rank and GPU stream: its idle time by cause (docs/ANALYSIS.md "Idle time per stream").
-- @role summary
CREATE TABLE summary_streams (
  rank INTEGER NOT NULL, device INTEGER NOT NULL, stream INTEGER NOT NULL,
  span_ns INTEGER, busy_ns INTEGER, idle_ns INTEGER, host_bound_ns INTEGER, kernel_gap_ns INTEGER,
  other_ns INTEGER, gaps INTEGER, compute_ns INTEGER,
  work_class INTEGER,  -- class with the most time: 0 compute, 1 comm, 2 memory, 3 sync
  PRIMARY KEY (rank, device, stream)
);
-- One row per rank, activity name and class: counts and times (step_ns: launched inside a step).
-- @role summary
CREATE TABLE summary_kernels (
  rank INTEGER NOT NULL, name TEXT NOT NULL, class INTEGER NOT NULL,  -- class: 0 compute, 1 comm, 2 memory, 3 sync
  count INTEGER, total_ns INTEGER, step_ns INTEGER, min_ns INTEGER, max_ns INTEGER
);
-- One row per rank and CPU operator name: inclusive and self time (self: without nested CPU operators).
-- @role summary
CREATE TABLE summary_ops (
  rank INTEGER NOT NULL, name TEXT NOT NULL,
  count INTEGER, total_ns INTEGER, self_ns INTEGER, step_ns INTEGER, self_step_ns INTEGER,
  -- GPU time of the activities launched from inside the operator (gpu_ns) and from it directly (gpu_self_ns),
  -- whole rank and inside steps
  gpu_ns INTEGER, gpu_self_ns INTEGER, gpu_step_ns INTEGER, gpu_self_step_ns INTEGER  -- [optional]
);
-- One row per rank, collective operation, group size and message size (0: unknown).
-- @role summary
CREATE TABLE summary_collectives (
  rank INTEGER NOT NULL, op TEXT NOT NULL, group_size INTEGER, bytes INTEGER,
  count INTEGER, total_ns INTEGER, step_ns INTEGER
);
-- One row per rank, CPU operator name and recorded input shapes (op_work's counted operators): calls and the
-- GPU time of the activities attributed to them (op_work.kernel_ns), whole rank and of the operators starting
-- inside a step (all of them when the rank has no steps). What `diff` matches operators on across runs.
-- @role summary
CREATE TABLE summary_op_shapes (
  rank INTEGER NOT NULL, name TEXT NOT NULL,
  input_dims TEXT NOT NULL,  -- as recorded: [[8, 16], [16, 32]]
  count INTEGER, gpu_ns INTEGER, gpu_step_ns INTEGER
);
-- The rank x time overview: per rank and bucket (summary_ranks.overview_*), the time of each class in it.
-- @role summary
CREATE TABLE summary_overview (
  rank INTEGER NOT NULL, bucket INTEGER NOT NULL,  -- bucket index; it covers [bucket, bucket + 1) * width
  compute_ns INTEGER, comm_ns INTEGER, exposed_comm_ns INTEGER, memory_only_ns INTEGER,
  busy_ns INTEGER,  -- |union of all work| in the bucket
  span_ns INTEGER,  -- the part of the bucket inside the rank's GPU span (idle = span_ns - busy_ns)
  PRIMARY KEY (rank, bucket)
);

CREATE VIEW activity_names AS
  SELECT a.*, s.value AS name_text FROM activities a JOIN strings s ON s.id = a.name;

-- @indexes: the writer creates everything below once the bulk load is complete (faster than maintaining them).
-- Only the access paths that SQL users and meshscope need are indexed: each index costs import time.
-- Time range per (rank, stream): the timeline and the per-stream analyses.
CREATE INDEX activities_by_stream ON activities (rank, device, stream, start_ns);
-- Launch linkage: from an API call to the work it launched.
CREATE INDEX activities_by_correlation ON activities (rank, correlation);
-- One collective across ranks: (communicator, seq), then per rank by time.
CREATE INDEX collectives_by_instance ON collectives (communicator, seq, rank);
CREATE INDEX collectives_by_rank ON collectives (rank, start_ns);
-- A thread's scheduling and samples in time order: the timeline's thread rows and a rank read alone.
CREATE INDEX thread_activity_by_thread ON thread_activity (rank, pid, tid, kind, start_ns);
