// The expected maximum of independent normal draws: how much later the last of N members of a collective
// arrives than their mean, for arrival jitter of standard deviation σ (σ × expected_normal_maximum(N)). A
// group that grows waits for a later last member, even when no member is slower than before.
#pragma once

namespace meshscope::model {

// E[max(Z1, ..., ZN)] for N independent standard normal Z (David & Nagaraja, Order Statistics, 3rd ed. 2003,
// §3.1: ∫ x N φ(x) Φ(x)^(N-1) dx); 0 for N ≤ 1. Tabulated by Harter (1961, Biometrika 48): 0.56419 for N = 2,
// 1.53875 for N = 10, 2.50759 for N = 100.
double expected_normal_maximum(int n);

}  // namespace meshscope::model
