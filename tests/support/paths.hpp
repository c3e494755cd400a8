// Included in every test and benchmark source (-include): the paths the tests use (the shared traces, the
// meshscope binary, helper programs) are given relative to the source tree and made absolute at run time, so
// that a test's compile command is the same in every clone and the compiler cache serves one clone from
// another.
#pragma once

// The source tree joined with RELATIVE ("." for the tree itself), made once and kept for the process's life.
const char* meshscope_test_path(const char* relative);
