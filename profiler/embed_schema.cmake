# Turns schema.sql into a C++ raw string literal.
file(READ ${INPUT} SCHEMA_TEXT)
file(WRITE ${OUTPUT} "R\"meshscope_schema(${SCHEMA_TEXT})meshscope_schema\"")
