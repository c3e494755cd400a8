-- Collective metadata as imported: per rank, operation, group and source, the count, bytes and sequence range.
SELECT c.rank, op.value AS op, c.group_size, pg.value AS communicator, descr.value AS pg_desc, dt.value AS dtype,
  algo.value AS algorithm, proto.value AS protocol, c.source, COUNT(*) AS count, SUM(c.in_bytes) AS in_bytes,
  SUM(c.out_bytes) AS out_bytes, MIN(c.seq) AS min_seq, MAX(c.seq) AS max_seq,
  SUM(c.activity_id IS NOT NULL) AS with_kernel, SUM(c.end_ns - c.start_ns) AS total_ns
FROM collectives c
  LEFT JOIN strings op ON op.id = c.op LEFT JOIN strings pg ON pg.id = c.communicator
  LEFT JOIN strings descr ON descr.id = c.pg_desc LEFT JOIN strings dt ON dt.id = c.dtype
  LEFT JOIN strings algo ON algo.id = c.algorithm LEFT JOIN strings proto ON proto.id = c.protocol
GROUP BY c.rank, op.value, c.group_size, pg.value, descr.value, dt.value, algo.value, proto.value, c.source
ORDER BY c.rank, op.value, c.source, algo.value, proto.value, dt.value, pg.value;
