#ifndef CEPOLL_SHIM_H
#define CEPOLL_SHIM_H

// Swift's Glibc module leaves out <sys/epoll.h>; nothing to link, it is glibc's.
#include <sys/epoll.h>

#endif
