/* libh5zgpu.so holds the codec library whole (linked in as an archive); this file only gives the
 * shared object a source of its own. Its exports are the public API (shared_exports.map). */
#include "h5zgpu.h"

typedef h5zgpu_status h5zgpu_shared_status;
