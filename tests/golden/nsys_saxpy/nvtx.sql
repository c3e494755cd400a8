-- NVTX ranges of the Nsight Systems export per rank, domain (category) and name: count, depth range, total ns.
SELECT r.rank, c.value AS domain, n.value AS name, COUNT(*) AS count, MIN(r.depth) AS min_depth,
  MAX(r.depth) AS max_depth, SUM(r.end_ns - r.start_ns) AS total_ns
FROM ranges r JOIN strings n ON n.id = r.name LEFT JOIN strings c ON c.id = r.category
GROUP BY r.rank, c.value, n.value ORDER BY r.rank, c.value, n.value;
