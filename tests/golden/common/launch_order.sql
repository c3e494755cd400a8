-- GPU work linked to its launch call (same rank and correlation id) and how much of it starts on the GPU before
-- that call began: launch links are scoped to a process (and a file), so none should.
WITH launch AS (
  SELECT rank, correlation, min(start_ns) AS start_ns FROM api_calls WHERE correlation IS NOT NULL GROUP BY rank, correlation
)
SELECT count(*) AS linked_gpu_work, coalesce(sum(a.start_ns < l.start_ns), 0) AS starting_before_launch
FROM activities a JOIN launch l ON l.rank = a.rank AND l.correlation = a.correlation;
