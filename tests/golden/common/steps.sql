-- ProfilerStep ranges per rank with exact start and duration in ns.
SELECT rank, step, start_ns, end_ns - start_ns AS dur_ns, depth FROM ranges WHERE kind = 4 ORDER BY rank, start_ns;
