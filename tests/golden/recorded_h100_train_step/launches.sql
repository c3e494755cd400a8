-- Every kernel, copy and memset of the recorded job has the runtime or driver call that launched it (same rank and
-- correlation id), and none starts on the GPU before that call began.
SELECT e.name AS kind, count(*) AS activities,
       sum(EXISTS (SELECT 1 FROM api_calls c WHERE c.rank = a.rank AND c.correlation = a.correlation)) AS launched,
       sum(a.start_ns < (SELECT min(c.start_ns) FROM api_calls c WHERE c.rank = a.rank AND c.correlation = a.correlation)) AS before_launch
FROM activities a JOIN enums e ON e.enum_name = 'activity_kind' AND e.value = a.kind
WHERE e.name IN ('kernel', 'memcpy', 'memset')
GROUP BY e.name ORDER BY e.name;
