#!/bin/sh
# Regenerate media/icon.png (128x128 RGBA, the extension icon) from media/icon.svg with a headless
# Chromium (Debian's `chromium`; set CHROMIUM to another binary). The PNG is committed, so packaging
# (`npx vsce package`) never needs this script or a browser.
set -eu
cd "$(dirname "$0")/.."
"${CHROMIUM:-chromium}" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --default-background-color=00000000 --window-size=128,128 \
    --screenshot="$PWD/media/icon.png" "file://$PWD/media/icon.svg" 2>/dev/null
echo "wrote media/icon.png"
