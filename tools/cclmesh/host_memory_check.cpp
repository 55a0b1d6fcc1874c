#include "tools/cclmesh/host_memory_check.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

std::uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

std::uint64_t host_memory_available_bytes() {
  // "MemAvailable:   19234567 kB": what the kernel can give without swapping (free memory and
  // what the page cache would give back), not the physical total other processes share.
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB" && kib > 0) return kib * 1024;
    break;
  }
  return host_memory_bytes();
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }

// What the run is checked against: all the memory available, or sweep -j's share of it.
std::string memory_bound(std::uint64_t host_bytes, std::uint32_t runs_at_once) {
  if (runs_at_once == 1) return fmt::format("the {:.1f} GiB of memory this machine has available", gib(host_bytes));
  return fmt::format("{:.1f} GiB, this machine's {:.1f} GiB of memory shared by the {} points sweep -j runs at once",
                     gib(host_bytes / runs_at_once), gib(host_bytes), runs_at_once);
}

}  // namespace

void reject_data_past_host_memory(const std::string& size_option, const std::string& size_value,
                                  const HostMemoryNeed& need, std::uint64_t host_bytes, std::uint32_t runs_at_once) {
  if (host_bytes == 0 || runs_at_once == 0) return;
  const std::uint64_t share = host_bytes / runs_at_once;
  if (need.peak() <= share) return;
  const std::string bound = memory_bound(host_bytes, runs_at_once);
  const bool counted = need.expected_outputs_counted;
  const std::string written = need.unwritten_buffers == 0
                                  ? std::string()
                                  : fmt::format(" of which the op writes {:.1f} GiB,", gib(need.written_buffers()));
  throw UsageError(fmt::format(
      "{}: {} with data: this process would hold {}{:.1f} GiB as real bytes ({} B in the op's buffers on each of {} "
      "chips, {:.1f} GiB,{} and the host's inputs{}), more than {}; expected --no-data (timing only, no data held), "
      "a smaller {} or fewer chips{}",
      size_option, size_value, counted ? "" : "at least ", gib(need.peak()), need.buffers_per_chip, need.chips,
      gib(need.buffers_per_chip * need.chips), written,
      counted ? " and expected outputs" : "; its expected outputs come on top", bound, size_option,
      runs_at_once == 1 ? "" : ", or a smaller -j"));
}

void reject_client_data_past_host_memory(const std::string& size_option, const std::string& size_value,
                                         const HostMemoryNeed& need, std::uint64_t host_bytes,
                                         std::uint32_t runs_at_once) {
  if (host_bytes == 0 || runs_at_once == 0) return;
  if (need.peak() <= host_bytes / runs_at_once) return;
  throw UsageError(fmt::format(
      "{}: {} with data on the served device: this client would hold {:.1f} GiB as real bytes (the host's inputs "
      "and expected outputs; the op's buffers are the server's), more than {}; expected a smaller {}, or a device "
      "served timing-only (cclmesh serve --no-data){}",
      size_option, size_value, gib(need.peak()), memory_bound(host_bytes, runs_at_once), size_option,
      runs_at_once == 1 ? "" : ", or a smaller -j"));
}

}  // namespace cclmesh::cli
