#include "tools/cclmesh/exit_without_teardown.hpp"

#include <utility>
#include <vector>

namespace cclmesh::cli {

namespace {

bool teardown_skippable_at_exit = false;  // main() said so (and this is no sanitizer build)
bool process_exits_after_run = false;

// Reachable from here to the exit, so a leak checker run on a release build (valgrind) reports
// the kept devices as still reachable rather than lost.
std::vector<runtime::MeshDevice*>& kept_devices() {
  static auto* kept = new std::vector<runtime::MeshDevice*>;
  return *kept;
}

}  // namespace

void allow_exit_without_teardown() {
#if !defined(CCLMESH_ASAN) && !defined(__SANITIZE_ADDRESS__)
  teardown_skippable_at_exit = true;
#endif
}

void process_exits_after_its_run() { process_exits_after_run = true; }

void finish_with_device(std::unique_ptr<runtime::MeshDevice> device, bool records_a_trace) {
  if (teardown_skippable_at_exit && process_exits_after_run && !records_a_trace) {
    kept_devices().push_back(device.release());
  }
  // Otherwise `device` is destroyed here.
}

}  // namespace cclmesh::cli
