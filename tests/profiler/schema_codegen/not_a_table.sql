-- @role job
CREATE TABLE t (
  key TEXT PRIMARY KEY  -- a key
);
INSERT INTO t VALUES ('a statement that is no declaration');
