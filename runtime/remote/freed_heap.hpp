#pragma once
// Handing the heap a finished session freed back to the operating system.
//
// A long-lived server's resident set crept up session after session with its live heap nearly
// flat (docs/remote_device.md, "A long-lived server's memory"; measured session 30 with heaptrack
// on `serve --system t3k`: 22.6 MB live after 10 sessions, 23.2 MB after 90, while VmRSS went
// from 31.5 to 39.8 MB). The growth was in the brk heap, not in mappings (fiber stacks and the
// like kept their count), and one malloc_trim(0) on the running server took VmRSS from 38.5 to
// 27.3 MB: glibc's malloc holding the pages of chunks freed inside the arena, which its own
// top-of-heap trim does not return. Not a leak of ours, so the fix is to hand them back once a
// session is over (RemoteDeviceServer, after the session's teardown and any reset).

namespace cclmesh::runtime::remote {

// malloc_trim(0) where the C library has it (glibc), which returns every whole free page of
// every arena to the OS (madvise), not only the top of the heap; elsewhere nothing.
void return_freed_heap_to_os();

}  // namespace cclmesh::runtime::remote
