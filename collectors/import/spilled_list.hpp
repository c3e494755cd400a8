// SpilledList: a list of plain records appended while a trace is read and used, if at all, once it is
// complete. Past a million records it goes on in an unnamed temporary file (TMPDIR, else /tmp) instead of
// memory, so that what reading holds does not grow with the trace (a trace of 27.5 million
// operators). Most lists are never read back: the operators' links to kernels are computed only when some
// operator's work could be (record_shapes), and then take() brings the records back in one allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

namespace meshscope::import {

// An unnamed file for scratch data, removed by the system when closed or when the process ends however it
// ends. Throws Error when none can be made.
std::FILE* open_scratch_file();

// Writes or reads SIZE bytes, throwing Error (naming the temporary folder) on a short write or read.
void write_scratch(std::FILE* file, const void* data, std::size_t size);
void read_scratch(std::FILE* file, void* data, std::size_t size);

template <typename T>
class SpilledList {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  // Records held in memory before any goes to the file; then written a block at a time.
  static constexpr std::size_t kInMemory = std::size_t{1} << 20;
  static constexpr std::size_t kBlock = std::size_t{1} << 16;

  SpilledList() = default;
  ~SpilledList() { close(); }
  SpilledList(const SpilledList&) = delete;
  SpilledList& operator=(const SpilledList&) = delete;

  void push_back(const T& record) {
    if (held_.size() == (file_ ? kBlock : kInMemory)) spill();
    held_.push_back(record);
    ++size_;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Records written to the file so far (0 while the list fits in memory).
  std::size_t spilled() const { return spilled_; }

  // Every record in the order added; the list is empty after.
  std::vector<T> take() {
    std::vector<T> out;
    if (!file_) {
      out.swap(held_);
    } else {
      out.resize(size_);
      std::rewind(file_);
      read_scratch(file_, out.data(), spilled_ * sizeof(T));
      std::copy(held_.begin(), held_.end(), out.begin() + static_cast<std::ptrdiff_t>(spilled_));
    }
    clear();
    return out;
  }
  void clear() {
    close();
    held_ = {};
    size_ = spilled_ = 0;
  }

 private:
  void spill() {
    if (!file_) file_ = open_scratch_file();
    write_scratch(file_, held_.data(), held_.size() * sizeof(T));
    spilled_ += held_.size();
    held_.clear();
    if (held_.capacity() > kBlock) {
      held_.shrink_to_fit();
      held_.reserve(kBlock);
    }
  }
  void close() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }

  std::vector<T> held_;
  std::FILE* file_ = nullptr;
  std::size_t size_ = 0, spilled_ = 0;
};

}  // namespace meshscope::import
