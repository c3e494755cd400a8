-- @role events
CREATE TABLE t (
  rank     INTEGER NOT NULL,  -- owning rank
  start_ns INTEGER NOT NULL   -- [clok] a misspelt tag
);
