#pragma once
// The server's side of the remote device protocol without its connection: a session's hello,
// whether a frame may carry the data it announces, and each request run on the served device
// (docs/remote_device.md). RemoteDeviceServer reads frames off a socket and hands them here; the
// libFuzzer target fuzz_remote_protocol hands it bytes directly, so that every decision made on
// what a client sent is reachable without a socket.
//
// It keeps what outlives a session: the handles given since the device's last reset, the work
// enqueued and not finished, the host reads' bytes held until a finish(), the session count.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "runtime/remote/remote_server_options.hpp"
#include "runtime/remote/served_handles.hpp"

namespace cclmesh::runtime::remote {

class ServedRequests {
 public:
  // `options` is the server's; both outlive this.
  ServedRequests(MeshDevice& device, const RemoteServerOptions& options);

  // The ok reply to a session's first frame (its CBOR header), which must be a hello of this
  // protocol and version; ProtocolError saying what it is otherwise.
  Json hello(const std::vector<std::uint8_t>& header) const;
  // Whether a request (its CBOR header) may carry `bytes` of data: only a write_buffer or
  // enqueue_write_buffer of a session (`greeted`) does, of its buffer's size per chip. Throws
  // BlobRefused for a write the server refuses but reads past (kMaxRefusedWriteBytes), else
  // FrameTooLarge.
  void check_blob(const std::vector<std::uint8_t>& header, std::uint64_t bytes, bool greeted) const;
  // Runs one request (a decoded header whose "type" is a string, not goodbye or shutdown) on the
  // device: the reply, ok or error (every exception becomes an error reply), and its blob.
  Json handle(const Json& request, std::vector<std::byte>& blob, std::vector<std::byte>& reply_blob);

  // A session's hello was accepted: its number (from 1). Its kernel profile starts here.
  std::uint64_t session_begun() {
    profile_origin_ = device_.profile_size();
    session_profile_dropped_ = 0;
    return ++sessions_begun_;
  }
  std::uint64_t sessions_begun() const { return sessions_begun_; }
  // After a session: resets the device if the calls left it failed or with work unfinished; the
  // line to log when it did (or tried and failed), none when there was no need.
  std::optional<std::string> reset_if_left_unusable();
  // After a session whose client went without its goodbye (killed, cut off, silent past the idle
  // timeout): frees the buffers and global semaphores that session created and left live, since
  // no client holds their handles any more; the line to log, none when it left none. Not when
  // the device is failed or has work unfinished (a reset, reset_if_left_unusable, frees them).
  std::optional<std::string> free_what_a_lost_session_left();

 private:
  // std::invalid_argument, starting "`call`: ", when `bytes` more enqueued host I/O would pass
  // max_enqueued_host_bytes.
  void require_room_for_enqueued(std::uint64_t bytes, std::string_view call) const;
  // std::invalid_argument, starting "`call`: ", when one host write or read of `bytes` is more
  // than max_enqueued_host_bytes: the server allocates its bytes whole (a write's before they
  // arrive), and a timing-only device's buffers have any size.
  void require_within_host_limit(std::uint64_t bytes, std::string_view call) const;
  // std::invalid_argument (host_memory_limit_refusal) when a buffer of `config` on every chip,
  // with the live buffers, would pass max_buffer_host_bytes on a device that keeps their bytes.
  void require_host_memory_for(const BufferConfig& config) const;
  // After the device's reset: nothing enqueued is held any more.
  void forget_enqueued();
  // The entries the device's profile gained in this session (since its start or its reset).
  std::size_t session_profile_size() const;
  // Past RemoteServerOptions::max_profile_entries, has the backend drop the session's oldest.
  void bound_session_profile();

  MeshDevice& device_;
  const RemoteServerOptions& options_;
  // Every buffer and global semaphore created through this server since the last reset, and
  // those freed since.
  ServedHandles<BufferHandle> buffers_{"buffer", "deallocate_buffer"};
  ServedHandles<GlobalSemaphore> semaphores_{"global semaphore", "deallocate_global_semaphore"};
  // What the calls since the last reset left: a DeviceError thrown (the device failed), and
  // work (workloads, host writes and reads, semaphore resets) enqueued since the last finish
  // that completed.
  bool device_failed_ = false;
  bool work_unfinished_ = false;
  // Where the device puts each enqueued read's bytes, in enqueue order, until a finish() sends
  // them to the session that enqueued it (`session`; 0 once a failed finish() dropped it). Kept
  // until the device has no use for them: a finish that completed, or a reset.
  struct StagedRead {
    std::uint64_t session = 0;
    std::vector<std::byte> bytes;
  };
  std::deque<StagedRead> staged_reads_;  // a deque: the device holds spans of its elements
  std::uint64_t enqueued_host_bytes_ = 0;  // writes' and reads' bytes since the last finish or reset
  std::uint64_t sessions_begun_ = 0;
  // The device's profile_size() when this session began or last reset the device: a session's
  // profile is its own (MeshDevice's contract), entry 0 its first kernel, whatever earlier
  // sessions ran (and whether or not the backend forgot them: RemoteServerOptions::session_ended).
  std::size_t profile_origin_ = 0;
  // The session's first entries the backend was told to drop (bound_session_profile): 0 ..
  // session_profile_dropped_ - 1 in the session's numbering.
  std::size_t session_profile_dropped_ = 0;
};

}  // namespace cclmesh::runtime::remote
