#!/bin/sh
# A test "browser" for $BROWSER (Python's webbrowser runs "$BROWSER <url>" and waits for it).
#
# Given an OAuth authorization URL, it follows the redirects with curl IN THE BACKGROUND and
# returns at once: the test authorization servers (e.g. the MCP conformance suite's) approve
# immediately and redirect to the client's loopback redirect_uri, so the client's own listener
# receives the code and the flow completes without a person.
#
#   BROWSER=tests/servers/browser.sh mcptask list --url URL
#
# MCPTASK_TEST_BROWSER_LOG=FILE appends each URL and curl's trace (redirects, status) to FILE;
# otherwise everything goes to /dev/null. Proxies are bypassed (everything is on loopback).
set -u
if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: browser.sh URL" >&2
    exit 2
fi
url=$1
log=${MCPTASK_TEST_BROWSER_LOG:-/dev/null}
{
    echo "browser.sh: open $url"
    curl --silent --show-error --location --max-redirs 10 --max-time 30 --noproxy '*' \
        --output /dev/null --write-out 'browser.sh: final %{url_effective} -> %{http_code}\n' \
        "$url"
    echo "browser.sh: curl exit $?"
} </dev/null >>"$log" 2>&1 &
exit 0
