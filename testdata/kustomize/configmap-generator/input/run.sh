#!/bin/sh
echo "starting"
exec app --flag
