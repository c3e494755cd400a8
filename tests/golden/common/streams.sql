-- GPU streams: activity count, busy time and first/last ns per (rank, device, stream).
SELECT a.rank, a.device, a.stream, s.name, COUNT(*) AS activities, SUM(a.end_ns - a.start_ns) AS busy_ns,
  MIN(a.start_ns) AS first_ns, MAX(a.end_ns) AS last_ns
FROM activities a LEFT JOIN streams s ON s.rank = a.rank AND s.device = a.device AND s.stream = a.stream
GROUP BY a.rank, a.device, a.stream ORDER BY a.rank, a.device, a.stream;
