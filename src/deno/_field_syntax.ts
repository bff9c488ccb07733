/**
 * The syntax of HTTP/1.1 heads that the gateway's server, its HTTP/1.1
 * client and its proxy all check, in one place.
 *
 * @module
 */

/** A token (RFC 9110 §5.6.2): a method, a field name, a name `Connection` lists. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * What no field value (RFC 9110 §5.5) or reason phrase may hold: it would
 * end the field, the line or the head.
 */
export const BREAKS_LINE = /[\0\r\n]/;
