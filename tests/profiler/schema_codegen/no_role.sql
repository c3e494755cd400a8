-- A table whose role is not said.
CREATE TABLE t (
  rank INTEGER NOT NULL  -- owning rank
);
