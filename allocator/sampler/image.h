/* image.h - the heap sampler's code image (allocator/sampler/inproc/),
 * carried inside memprof as bytes: built freestanding for the target,
 * linked at 0 with no relocation, turned into an array by
 * tools/embed_image.py.  memprof writes it at the start of the sampler's
 * memfd; it begins with struct sampler_image_header (abi.h), whose
 * wrapper[] offsets are the stand-ins to point the process's calls at. */
#ifndef MEMPROF_SAMPLER_IMAGE_H
#define MEMPROF_SAMPLER_IMAGE_H

extern const unsigned char sampler_image[];      /* 16-byte aligned */
extern const unsigned long sampler_image_len;    /* <= SAMPLER_CODE_SIZE */

#endif
