#include "analysis/compare/recorded_hardware.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "analysis/model/presets.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::compare {

namespace {

// "NVIDIA A100-PG509-200" -> "a100-pg509-200": lower case, the vendor's words dropped, spaces and slashes as
// dashes.
std::string spec_name(std::string_view device_name) {
  std::string n = vocabulary::lower(device_name);
  for (const char* vendor : {"nvidia ", "amd ", "tesla ", "instinct "}) {
    if (n.rfind(vendor, 0) == 0) n.erase(0, std::string_view(vendor).size());
  }
  std::string out;
  for (char c : n) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
    if (word) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string("gpu") : out;
}

// The PCIe x16 bandwidth per direction of an NVIDIA architecture, GB/s, as the datasheets state it halved
// (V100 PCIe: Gen3 32 GB/s; A100 PCIe: Gen4 64 GB/s; H100 PCIe: Gen5 128 GB/s); 0 when not known.
double pcie_gbps(std::int64_t compute_major) {
  if (compute_major == 7) return 16.0;
  if (compute_major == 8) return 32.0;
  if (compute_major >= 9) return 64.0;
  return 0;
}

bool is_amd(const model::HardwareSpec& h) {
  return h.family.rfind("cdna", 0) == 0;
}

double log_distance(double a, double b) {
  return a > 0 && b > 0 ? std::abs(std::log(a / b)) : 1e9;
}

}  // namespace

std::optional<RecordedHardware> hardware_from_traits(std::string_view device_name, const GpuTraits& traits,
                                                     const std::vector<model::HardwareSpec>& presets) {
  if (traits.compute_major < 0 || traits.compute_minor < 0 || traits.compute_units <= 0 ||
      traits.memory_bytes <= 0)
    return std::nullopt;
  const std::string cc = fmt::format("{}.{}", traits.compute_major, traits.compute_minor);
  const double sms = static_cast<double>(traits.compute_units);
  const double gib = static_cast<double>(traits.memory_bytes) / double(1ull << 30);
  const model::HardwareSpec* base = nullptr;
  auto key = [&](const model::HardwareSpec& h) {
    return std::tuple(log_distance(sms, h.sm_count), log_distance(gib, h.hbm_capacity_gib), h.name);
  };
  // AMD's gfx numbers overlap NVIDIA's compute capabilities (gfx90a and Hopper both read 9.0): the vendor
  // comes from the name, and nothing is described for a vendor the name does not say.
  const vocabulary::GpuVendor vendor = vocabulary::gpu_vendor(device_name);
  if (vendor == vocabulary::GpuVendor::kUnknown) return std::nullopt;
  const bool amd = vendor == vocabulary::GpuVendor::kAmd;
  for (const model::HardwareSpec& h : presets) {
    if (h.compute_capability != cc || h.sm_count <= 0 || is_amd(h) != amd) continue;
    if (base == nullptr || key(h) < key(*base)) base = &h;
  }
  if (base == nullptr) return std::nullopt;

  RecordedHardware out;
  out.base = base->name;
  out.same_size = base->sm_count == traits.compute_units;
  model::HardwareSpec& s = out.spec;
  s = *base;
  s.name = spec_name(device_name);
  s.compute_capability = cc;
  s.sm_count = static_cast<int>(traits.compute_units);
  s.hbm_capacity_gib = std::round(gib * 10) / 10;
  const double scale = sms / base->sm_count;
  for (double* rate :
       {&s.peak_tflops_bf16, &s.peak_tflops_fp8, &s.peak_tflops_fp4, &s.peak_tflops_tf32, &s.peak_tflops_fp32,
        &s.attention_tflops_flash, &s.attention_tflops_fused, &s.attention_tflops_standard})
    *rate *= scale;

  const std::string recorded =
      fmt::format("{} {}, {} {} and {:.1f} GiB recorded", amd ? "architecture" : "compute capability", cc,
                  traits.compute_units, amd ? "CUs" : "SMs", s.hbm_capacity_gib);
  std::string rates = out.same_size
                          ? fmt::format("the rates of {} (the same architecture and size)", base->name)
                          : fmt::format("the rates of {} scaled by {}/{} {} at its clocks", base->name,
                                        traits.compute_units, base->sm_count, amd ? "CUs" : "SMs");
  std::string links = "links";
  const bool says_pcie = vocabulary::lower(device_name).find("pcie") != std::string::npos;
  if (says_pcie && !amd && s.intra_node_link != "PCIe" && pcie_gbps(traits.compute_major) > 0) {
    s.intra_node_link = "PCIe";
    s.intra_node_gbps = pcie_gbps(traits.compute_major);
    rates += fmt::format(", a PCIe card's {:g} GB/s between GPUs", s.intra_node_gbps);
    links = "the network";
  }
  out.how = fmt::format("{}: {}, memory as recorded; clocks, HBM bandwidth, {} and efficiencies as {}'s",
                        recorded, rates, links, base->name);
  s.source = fmt::format("'{}' described from its records ({})", device_name, out.how);
  return out;
}

std::optional<RecordedHardware> hardware_from_traits(std::string_view device_name, const GpuTraits& traits) {
  static const std::vector<model::HardwareSpec> presets = [] {
    std::vector<model::HardwareSpec> all;
    std::vector<std::string> names;
    try {
      names = model::hardware_presets();
    } catch (const std::exception&) {
      return all;  // no assets folder: nothing to describe a GPU from
    }
    for (const std::string& name : names) {
      try {
        all.push_back(model::load_hardware(name));
      } catch (const std::exception&) {
        // A damaged preset describes nothing; `compare --hardware` with it names the damage.
      }
    }
    return all;
  }();
  return hardware_from_traits(device_name, traits, presets);
}

}  // namespace meshscope::compare
