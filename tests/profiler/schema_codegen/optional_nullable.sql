-- @role description
CREATE TABLE t (
  rank INTEGER NOT NULL,  -- owning rank
  name TEXT               -- [optional] may be NULL anyway: the tag says nothing
);
