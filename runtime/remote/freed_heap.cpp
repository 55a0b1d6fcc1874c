#include "runtime/remote/freed_heap.hpp"

#include <cstdlib>  // defines __GLIBC__ under glibc; tested below before anything else would

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cclmesh::runtime::remote {

void return_freed_heap_to_os() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

}  // namespace cclmesh::runtime::remote
