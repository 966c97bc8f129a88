#include "client/output/output.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ablation::client {
namespace {

std::string Directory(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Reason() { return std::strerror(errno); }

}  // namespace

std::size_t OutputWidth(std::optional<int> flag, bool to_stdout) {
  if (flag) return *flag > 0 ? static_cast<std::size_t>(*flag) : 0;
  if (to_stdout && ::isatty(STDOUT_FILENO) == 1) {
    struct winsize size {};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  }
  if (const char* columns = std::getenv("COLUMNS")) {
    const std::string_view text(columns);
    std::size_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value > 0) return value;
  }
  return 0;
}

std::string CheckOutputPath(const std::string& path) {
  if (path.empty()) return "-o needs a file name";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return path + " is a directory";
    if (!S_ISREG(st.st_mode))
      return ::access(path.c_str(), W_OK) == 0 ? "" : path + ": " + Reason();
  }
  const std::string dir = Directory(path);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return "cannot write in " + dir + ": " + Reason();
  return {};
}

std::string WriteOutputFile(const std::string& path, std::string_view text) {
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  auto write_all = [&](int fd) {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  };
  if (exists && !S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return "cannot open " + path + ": " + Reason();
    const bool ok = write_all(fd);
    const std::string why = ok ? "" : Reason();
    ::close(fd);
    return ok ? "" : "cannot write " + path + ": " + why;
  }
  std::string temp = Directory(path) + "/." + path.substr(path.rfind('/') + 1) + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return "cannot write in " + Directory(path) + ": " + Reason();
  // mkstemp makes it 0600; the file gets what a plain `> FILE` would give (or keeps its own).
  mode_t mode = 0;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
  bool ok = write_all(fd);
  std::string why = ok ? "" : Reason();
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = Reason();
  }
  if (ok && std::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    why = Reason();
  }
  if (!ok) {
    std::remove(temp.c_str());
    return "cannot write " + path + ": " + why;
  }
  return {};
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

}  // namespace ablation::client
