/*
 * bcryptprimitives.dll for Wine 8 (Debian 12's), which has none: the Go
 * runtime (1.22 and later) loads ProcessPrng from it at start and stops
 * without it. This one fills the buffer from RtlGenRandom
 * (advapi32!SystemFunction036), as the real one fills it from the system's
 * generator. Built by .ci/wine/smoke with mingw-w64; never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID, ULONG);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
    if (!SystemFunction036(data, n))
      return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
