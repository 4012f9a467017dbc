#include "CFuzzShim.h"
