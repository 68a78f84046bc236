/* cxla/cxla.h: the whole public API. */
#ifndef CXLA_CXLA_H_
#define CXLA_CXLA_H_

#include "cxla/status.h"
#include "cxla/types.h"
#include "cxla/shape.h"
#include "cxla/literal.h"
#include "cxla/npy.h"
#include "cxla/hlo.h"
#include "cxla/builder.h"
#include "cxla/custom_call.h"
#include "cxla/runtime.h"
#include "cxla/stablehlo.h"

#define CXLA_VERSION_MAJOR  0
#define CXLA_VERSION_MINOR  1
#define CXLA_VERSION_PATCH  0
#define CXLA_VERSION_STRING "0.1.0"

#endif /* CXLA_CXLA_H_ */
