-- The eight NVTX "train_step" ranges the script pushed, each with the kernels launched while it was open, from any
-- thread (the backward pass launches from autograd's own thread): 642 a step after the first (the step table of
-- `report` counts 751: with the copies and memsets).
SELECT row_number() OVER (ORDER BY r.start_ns) - 1 AS step, (r.end_ns - r.start_ns) > 0 AS has_duration,
       (SELECT count(*) FROM api_calls c JOIN activities a ON a.rank = c.rank AND a.correlation = c.correlation
        WHERE c.rank = r.rank AND c.start_ns >= r.start_ns AND c.end_ns <= r.end_ns
          AND a.kind = (SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'kernel')) AS kernels
FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value = 'train_step' ORDER BY r.start_ns;
