-- Devices and process groups each rank reported.
SELECT 'device' AS what, rank, device AS id, name, total_memory_bytes AS size, compute_major || '.' || compute_minor AS detail
FROM devices
UNION ALL
SELECT 'process_group', rank, pg_name, pg_desc, group_size, backend || ' ' || ranks_json FROM process_groups
ORDER BY 1, 2, 3;
