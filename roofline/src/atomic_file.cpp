#include "rl/roofline/results_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace rl::roofline {

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  auto fail_io = [&](std::string_view what) {
    throw std::runtime_error(
        fmt::format("cannot write {}: {}: {}", path.string(), what, std::strerror(errno)));
  };
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  // Formatted, not concatenated: GCC 12 at -O3 reports a false -Wrestrict in
  // `"." + std::string` here (GCC PR 105329).
  std::string temp = (dir / fmt::format(".{}.XXXXXX", path.filename().string())).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) fail_io("creating a temporary file");
  auto abandon = [&](std::string_view what) {
    int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    errno = saved;
    fail_io(what);
  };
  // mkstemp creates 0600; results are meant to be shared like any output file.
  if (::fchmod(fd, 0644) != 0) abandon("fchmod");
  std::size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("fsync");
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail_io("close");
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    fail_io("rename");
  }
  // Make the rename itself durable; a failure here leaves a complete file.
  if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace rl::roofline
