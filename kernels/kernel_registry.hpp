#pragma once
// Host side: kernel name -> entry point. The name in a KernelSpec selects the compiled-in
// function on the simulator and the kernel source file on hardware, so both come from here.

#include <span>
#include <string_view>
#include <vector>

namespace cclmesh::kernels {

using KernelFn = void (*)();

struct KernelInfo {
  std::string_view name;         // KernelSpec::kernel
  KernelFn entry;                // kernel_main_<name>
  std::string_view source_file;  // relative to the repository root, for the hardware backend
  bool runs_on_ethernet_core;    // ERISC kernel (router, EDM) rather than a Tensix data mover
};

// Every registered kernel, in a fixed order.
std::span<const KernelInfo> registered_kernels();

// Their names, in the same order.
std::vector<std::string_view> kernel_names();

// nullptr if no kernel has that name.
const KernelInfo* find_kernel_info(std::string_view name);
KernelFn find_kernel(std::string_view name);

}  // namespace cclmesh::kernels
