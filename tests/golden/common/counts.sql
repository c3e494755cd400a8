-- Per rank: where the rank number came from, world size, first/last event time (ns, profile clock), and event
-- counts by kind.
SELECT r.rank, r.world_size, r.rank_source, r.first_ns, r.last_ns,
  (SELECT COUNT(*) FROM activities a WHERE a.rank = r.rank AND a.kind = 1) AS kernels,
  (SELECT COUNT(*) FROM activities a WHERE a.rank = r.rank AND a.kind = 2) AS memcpys,
  (SELECT COUNT(*) FROM activities a WHERE a.rank = r.rank AND a.kind = 3) AS memsets,
  (SELECT COUNT(*) FROM activities a WHERE a.rank = r.rank AND a.kind = 4) AS syncs,
  (SELECT COUNT(*) FROM api_calls c WHERE c.rank = r.rank AND c.kind = 1) AS runtime_calls,
  (SELECT COUNT(*) FROM api_calls c WHERE c.rank = r.rank AND c.kind = 2) AS driver_calls,
  (SELECT COUNT(*) FROM ranges g WHERE g.rank = r.rank AND g.kind = 1) AS cpu_ops,
  (SELECT COUNT(*) FROM ranges g WHERE g.rank = r.rank AND g.kind = 2) AS annotations,
  (SELECT COUNT(*) FROM ranges g WHERE g.rank = r.rank AND g.kind = 3) AS python_functions,
  (SELECT COUNT(*) FROM ranges g WHERE g.rank = r.rank AND g.kind = 4) AS steps,
  (SELECT COUNT(*) FROM ranges g WHERE g.rank = r.rank AND g.kind = 5) AS gpu_annotations,
  (SELECT COUNT(*) FROM ranges g WHERE g.rank = r.rank AND g.kind = 7) AS other_ranges,
  (SELECT COUNT(*) FROM collectives k WHERE k.rank = r.rank) AS collectives,
  (SELECT COUNT(*) FROM flows f WHERE f.rank = r.rank) AS flows,
  (SELECT MAX(depth) FROM ranges g WHERE g.rank = r.rank) AS max_depth
FROM ranks r ORDER BY r.rank;
