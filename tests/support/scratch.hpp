// Included in every test source (-include): MESHSCOPE_TEST_TMP names this test process's scratch folder.
#pragma once

// MESHSCOPE_TEST_TMP_ROOT/p<PID>, made on the first call and removed with all it holds when the process
// exits.
const char* meshscope_test_scratch_dir();
