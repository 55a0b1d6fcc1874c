#include "kernels/kernel_registry.hpp"

#include <array>

#include "kernels/kernel_args.hpp"
#include "kernels/kernels.hpp"

namespace cclmesh::kernels {
namespace {

constexpr std::array kKernels{
    KernelInfo{kCclInterpreterKernelName, &kernel_main_ccl_interpreter, "kernels/ccl_interpreter.cpp", false},
    KernelInfo{kFabricRouterKernelName, &kernel_main_fabric_router, "kernels/fabric_router.cpp", true},
    KernelInfo{kFabricMuxKernelName, &kernel_main_fabric_mux, "kernels/fabric_mux.cpp", false},
    KernelInfo{kLegacyEdmKernelName, &kernel_main_legacy_edm, "kernels/legacy_edm.cpp", true},
    KernelInfo{kLegacyAllGatherSenderKernelName, &kernel_main_legacy_all_gather_sender,
               "kernels/legacy_all_gather_sender.cpp", false},
    KernelInfo{kLegacyAllGatherReceiverKernelName, &kernel_main_legacy_all_gather_receiver,
               "kernels/legacy_all_gather_receiver.cpp", false},
    KernelInfo{kLegacyReduceScatterSenderKernelName, &kernel_main_legacy_reduce_scatter_sender,
               "kernels/legacy_reduce_scatter_sender.cpp", false},
    KernelInfo{kLegacyReduceScatterReceiverKernelName, &kernel_main_legacy_reduce_scatter_receiver,
               "kernels/legacy_reduce_scatter_receiver.cpp", false},
    KernelInfo{kReduceKernelName, &kernel_main_reduce, "kernels/reduce.cpp", false},
    KernelInfo{kConcatKernelName, &kernel_main_concat, "kernels/concat.cpp", false},
};

}  // namespace

std::span<const KernelInfo> registered_kernels() { return kKernels; }

std::vector<std::string_view> kernel_names() {
  std::vector<std::string_view> names;
  names.reserve(kKernels.size());
  for (const KernelInfo& k : kKernels) {
    names.push_back(k.name);
  }
  return names;
}

const KernelInfo* find_kernel_info(std::string_view name) {
  for (const KernelInfo& k : kKernels) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

KernelFn find_kernel(std::string_view name) {
  const KernelInfo* k = find_kernel_info(name);
  return k == nullptr ? nullptr : k->entry;
}

}  // namespace cclmesh::kernels
