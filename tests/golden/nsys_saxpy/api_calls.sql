-- CUDA API calls of the Nsight Systems export per rank, kind and name: count, calls that launched GPU work, total ns.
SELECT c.rank, c.kind, n.value AS name, COUNT(*) AS count,
  SUM(EXISTS (SELECT 1 FROM activities a WHERE a.rank = c.rank AND a.correlation = c.correlation)) AS launched,
  SUM(c.end_ns - c.start_ns) AS total_ns
FROM api_calls c JOIN strings n ON n.id = c.name GROUP BY c.rank, c.kind, n.value ORDER BY c.rank, c.kind, n.value;
