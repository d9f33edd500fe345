// Validation of customer input shared by every module that names a customer.
import { z } from 'zod';

/** The merchant's id for its customer: `cus_` and its own reference (as Hyperswitch, merchants choose it). */
export const customerId = z.string().regex(/^cus_[A-Za-z0-9_-]{1,60}$/, 'must be cus_ followed by 1 to 60 letters, digits, _ or -');
