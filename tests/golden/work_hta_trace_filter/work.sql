-- Work per operator (op_work, kernel_work; docs/PROFILE.md "Work per operator") of two ranks of HTA's 128-rank
-- recommender (fp32 GEMMs, embedding bags, no attention): per operator name, category and status the calls,
-- FLOPs and bytes, the GPU activities attributed, their time, and what the activities' shares add up to.
SELECT s.value AS op, w.status, w.category, COUNT(*) AS calls, SUM(w.flops) AS flops, SUM(w.bytes) AS bytes,
  SUM(w.kernels) AS kernels, SUM(w.kernel_ns) AS kernel_ns,
  (SELECT SUM(k.flops) FROM kernel_work k JOIN op_work o ON o.id = k.op_id WHERE o.name = w.name
     AND o.status = w.status) AS kernel_flops
FROM op_work w JOIN strings s ON s.id = w.name
GROUP BY w.name, w.status, w.category ORDER BY op, w.status;
