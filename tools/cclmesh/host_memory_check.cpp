#include "tools/cclmesh/host_memory_check.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

std::uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

void reject_data_past_host_memory(const std::string& size_option, const std::string& size_value,
                                  std::uint64_t bytes_per_chip, std::uint32_t n_chips, std::uint64_t host_bytes) {
  if (host_bytes == 0 || n_chips == 0 || bytes_per_chip <= host_bytes / n_chips) return;
  const double total = static_cast<double>(bytes_per_chip) * n_chips;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw UsageError(fmt::format(
      "{}: {} with data: the op's buffers, held as real bytes in this process, are {} B on each of {} chips "
      "({:.1f} GiB), more than this machine's {:.1f} GiB of memory; expected --no-data (timing only, no data "
      "held), a smaller {} or fewer chips",
      size_option, size_value, bytes_per_chip, n_chips, total / kGiB, static_cast<double>(host_bytes) / kGiB,
      size_option));
}

}  // namespace cclmesh::cli
