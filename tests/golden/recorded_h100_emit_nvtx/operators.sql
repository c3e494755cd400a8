-- PyTorch's per-operator NVTX ranges (emit_nvtx with shapes) as `meshscope record` stored them: each name carries
-- the call's seq, op_id and sizes; the ten operators with the most ranges once those are stripped.
SELECT CASE WHEN instr(s.value, ', ') > 0 THEN substr(s.value, 1, instr(s.value, ', ') - 1) ELSE s.value END AS operator,
       count(*) AS ranges, count(DISTINCT r.name) AS distinct_names
FROM ranges r JOIN strings s ON s.id = r.name
WHERE s.value LIKE 'aten::%'
GROUP BY operator ORDER BY ranges DESC, operator LIMIT 10;
