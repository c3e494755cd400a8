// Expected maxima of normal draws against Harter's table (H. L. Harter, "Expected values of normal order
// statistics", Biometrika 48 (1961) 151-165, Table 1: the largest of n), and the one exact value, E[max of 2]
// = 1/√π.
#include "analysis/model/order_statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace meshscope::model {
namespace {

TEST(OrderStatistics, ExpectedNormalMaximaAreHartersTable) {
  EXPECT_EQ(expected_normal_maximum(1), 0.0);
  EXPECT_EQ(expected_normal_maximum(0), 0.0);
  EXPECT_NEAR(expected_normal_maximum(2), 1.0 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(expected_normal_maximum(2), 0.56419, 1e-5);
  EXPECT_NEAR(expected_normal_maximum(8), 1.42360, 1e-5);
  EXPECT_NEAR(expected_normal_maximum(10), 1.53875, 1e-5);
  EXPECT_NEAR(expected_normal_maximum(100), 2.50759, 1e-5);
  EXPECT_NEAR(expected_normal_maximum(20), 1.86748, 1e-5);
  EXPECT_NEAR(expected_normal_maximum(50), 2.24907, 1e-5);
  // It grows without bound but ever more slowly: about √(2 ln n) for large n.
  EXPECT_GT(expected_normal_maximum(16384), expected_normal_maximum(4096));
  EXPECT_LT(expected_normal_maximum(16384), std::sqrt(2.0 * std::log(16384.0)));
}

}  // namespace
}  // namespace meshscope::model
