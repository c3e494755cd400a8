-- Rank facts the Nsight Systems importer derives: pid, host, clock base, rank source, and its diagnostics.
SELECT r.rank, r.pid, r.hostname, r.backend, r.clock_base_ns, r.rank_source,
  (SELECT group_concat(severity || ': ' || message, ' | ') FROM diagnostics d WHERE d.rank = r.rank) AS diagnostics
FROM ranks r ORDER BY r.rank;
