#pragma once
// A MeshDevice that forwards every call to another one. Tests derive from it and override the
// one call they change (a backend whose create_buffer refuses with a type the simulator never
// throws there, one whose finish() is slow), so each stand-in says only what it does differently.

#include <optional>
#include <span>
#include <vector>

#include "runtime/device/mesh_device.hpp"

namespace cclmesh::runtime::remote {

class ForwardingMeshDevice : public MeshDevice {
 public:
  explicit ForwardingMeshDevice(MeshDevice& inner) : inner_(inner) {}

  const topo::Topology& topology() const override { return inner_.topology(); }
  std::vector<ChipId> chips() const override { return inner_.chips(); }
  CoreCoord worker_grid() const override { return inner_.worker_grid(); }
  std::vector<std::uint32_t> active_ethernet_channels(ChipId c) const override { return inner_.active_ethernet_channels(c); }
  const FabricOptions& fabric() const override { return inner_.fabric(); }
  BufferHandle create_buffer(const BufferConfig& c) override { return inner_.create_buffer(c); }
  void deallocate_buffer(const BufferHandle& b) override { inner_.deallocate_buffer(b); }
  void write_buffer(ChipId c, const BufferHandle& b, std::span<const std::byte> d) override { inner_.write_buffer(c, b, d); }
  void read_buffer(ChipId c, const BufferHandle& b, std::span<std::byte> d) override { inner_.read_buffer(c, b, d); }
  void enqueue_write_buffer(ChipId c, const BufferHandle& b, std::span<const std::byte> d) override {
    inner_.enqueue_write_buffer(c, b, d);
  }
  void enqueue_read_buffer(ChipId c, const BufferHandle& b, std::span<std::byte> o) override {
    inner_.enqueue_read_buffer(c, b, o);
  }
  GlobalSemaphore create_global_semaphore(const std::vector<CoreRange>& c, CoreKind k, std::uint32_t v) override {
    return inner_.create_global_semaphore(c, k, v);
  }
  void reset_global_semaphore(const GlobalSemaphore& s, std::uint32_t v) override { inner_.reset_global_semaphore(s, v); }
  void deallocate_global_semaphore(const GlobalSemaphore& s) override { inner_.deallocate_global_semaphore(s); }
  void enqueue_workloads(std::span<const MeshWorkload> w) override { inner_.enqueue_workloads(w); }
  void finish() override { inner_.finish(); }
  std::size_t profile_size() const override { return inner_.profile_size(); }
  std::vector<KernelProfile> profile_since(std::size_t e) const override { return inner_.profile_since(e); }
  std::optional<std::vector<LinkTraffic>> link_traffic() const override { return inner_.link_traffic(); }
  void reset() override { inner_.reset(); }

 private:
  MeshDevice& inner_;
};

}  // namespace cclmesh::runtime::remote
