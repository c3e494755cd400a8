#include "collectors/import/spilled_list.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "profiler/error.hpp"

namespace meshscope::import {
namespace {

std::string scratch_folder() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

}  // namespace

std::FILE* open_scratch_file() {
  const std::string dir = scratch_folder();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {  // a file system without unnamed files: a named one, removed at once
    std::string name = dir + "/meshscope-scratch-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) fail("cannot make a temporary file in {}: {}", dir, std::strerror(errno));
  std::FILE* file = ::fdopen(fd, "w+b");
  if (!file) {
    const int error = errno;
    ::close(fd);
    fail("cannot make a temporary file in {}: {}", dir, std::strerror(error));
  }
  return file;
}

void write_scratch(std::FILE* file, const void* data, std::size_t size) {
  if (size > 0 && std::fwrite(data, 1, size, file) != size)
    fail("cannot write a temporary file in {}: {}", scratch_folder(), std::strerror(errno));
}

void read_scratch(std::FILE* file, void* data, std::size_t size) {
  if (size == 0) return;
  if (std::fflush(file) != 0 || std::fread(data, 1, size, file) != size)
    fail("cannot read back a temporary file in {}: {}", scratch_folder(),
         std::ferror(file) ? std::strerror(errno) : "it is shorter than was written");
}

}  // namespace meshscope::import
