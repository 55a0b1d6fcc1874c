#pragma once
// A gmock MeshDevice: tests check that op code reaches a device only through the interface.

#include <gmock/gmock.h>

#include "runtime/device/mesh_device.hpp"

namespace cclmesh::runtime::testing {

class MockMeshDevice : public MeshDevice {
 public:
  MOCK_METHOD(const topo::Topology&, topology, (), (const, override));
  MOCK_METHOD(std::vector<ChipId>, chips, (), (const, override));
  MOCK_METHOD(CoreCoord, worker_grid, (), (const, override));
  MOCK_METHOD(std::vector<std::uint32_t>, active_ethernet_channels, (ChipId chip), (const, override));
  MOCK_METHOD(const FabricOptions&, fabric, (), (const, override));
  MOCK_METHOD(BufferHandle, create_buffer, (const BufferConfig& config), (override));
  MOCK_METHOD(void, deallocate_buffer, (const BufferHandle& buffer), (override));
  MOCK_METHOD(void, write_buffer, (ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data),
              (override));
  MOCK_METHOD(void, read_buffer, (ChipId chip, const BufferHandle& buffer, std::span<std::byte> data), (override));
  MOCK_METHOD(void, enqueue_write_buffer, (ChipId chip, const BufferHandle& buffer, std::span<const std::byte> data),
              (override));
  MOCK_METHOD(void, enqueue_read_buffer, (ChipId chip, const BufferHandle& buffer, std::span<std::byte> out),
              (override));
  MOCK_METHOD(GlobalSemaphore, create_global_semaphore,
              (const std::vector<CoreRange>& cores, CoreKind kind, std::uint32_t initial_value), (override));
  MOCK_METHOD(void, reset_global_semaphore, (const GlobalSemaphore& semaphore, std::uint32_t value), (override));
  MOCK_METHOD(void, deallocate_global_semaphore, (const GlobalSemaphore& semaphore), (override));
  MOCK_METHOD(void, enqueue_workloads, (std::span<const MeshWorkload> workloads), (override));
  using MeshDevice::enqueue_workload;
  MOCK_METHOD(void, finish, (), (override));
  MOCK_METHOD(std::size_t, profile_size, (), (const, override));
  MOCK_METHOD(std::vector<KernelProfile>, profile_since, (std::size_t first_entry), (const, override));
  MOCK_METHOD(std::optional<std::vector<LinkTraffic>>, link_traffic, (), (const, override));
  MOCK_METHOD(void, reset, (), (override));
};

}  // namespace cclmesh::runtime::testing
